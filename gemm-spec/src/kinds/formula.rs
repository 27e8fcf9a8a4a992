//! The small expression language of kind manifests: integers and booleans over named values
//! (a tile's m, n, k and parameters, a kernel's operand sizes and layout, the contract, the
//! tier's hardware), as C writes them.
//!
//! ```text
//! expr    = cond
//! cond    = or ( "?" expr ":" expr )?
//! or      = and ( "||" and )*
//! and     = cmp ( "&&" cmp )*
//! cmp     = sum ( ("==" | "!=" | "<" | "<=" | ">" | ">=") sum )?  |  sum "in" "[" expr ("," expr)* "]"
//! sum     = product ( ("+" | "-") product )*
//! product = unary ( ("*" | "/" | "%") unary )*
//! unary   = ("!" | "-") unary | primary
//! primary = integer | "true" | "false" | name | name "(" expr ("," expr)* ")" | "(" expr ")"
//! ```
//!
//! Functions: `min(a, b, ...)`, `max(a, b, ...)`. Integers are `i64`; overflow, division by
//! zero and a type mismatch are evaluation errors, never panics. A formula keeps its text, so
//! an error can quote the rule as the manifest writes it.

use std::fmt;

/// A value: an integer or a boolean.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    Int(i64),
    Bool(bool),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Bool(b) => write!(f, "{b}"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bin {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Node {
    Int(i64),
    Bool(bool),
    Var(String),
    Not(Box<Node>),
    Neg(Box<Node>),
    Bin(Bin, Box<Node>, Box<Node>),
    Cond(Box<Node>, Box<Node>, Box<Node>),
    In(Box<Node>, Vec<Node>),
    Call(String, Vec<Node>),
}

/// A parsed expression with the text it was written as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Formula {
    text: String,
    node: Node,
}

impl fmt::Display for Formula {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Int(i64),
    Name(String),
    Op(&'static str),
}

const OPS: [&str; 21] = [
    "==", "!=", "<=", ">=", "&&", "||", "<", ">", "+", "-", "*", "/", "%", "!", "?", ":", "(", ")",
    "[", "]", ",",
];

fn lex(text: &str) -> Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            let v: i64 = text[start..i]
                .parse()
                .map_err(|_| format!("`{}` is too large an integer", &text[start..i]))?;
            out.push(Tok::Int(v));
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Name(text[start..i].to_string()));
        } else {
            let op = OPS
                .iter()
                .find(|op| text[i..].starts_with(**op))
                .ok_or_else(|| {
                    format!("unexpected `{}`", &text[i..].chars().next().unwrap_or(' '))
                })?;
            out.push(Tok::Op(op));
            i += op.len();
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<Tok>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at)
    }
    fn eat(&mut self, op: &str) -> bool {
        if self.peek() == Some(&Tok::Op(leak(op))) {
            self.at += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, op: &str) -> Result<(), String> {
        if self.eat(op) {
            Ok(())
        } else {
            Err(format!("expected `{op}`{}", self.found()))
        }
    }
    fn found(&self) -> String {
        match self.peek() {
            None => " at the end".into(),
            Some(Tok::Int(v)) => format!(", found `{v}`"),
            Some(Tok::Name(n)) => format!(", found `{n}`"),
            Some(Tok::Op(o)) => format!(", found `{o}`"),
        }
    }
    fn expr(&mut self) -> Result<Node, String> {
        let c = self.or()?;
        if self.eat("?") {
            let a = self.expr()?;
            self.expect(":")?;
            let b = self.expr()?;
            return Ok(Node::Cond(Box::new(c), Box::new(a), Box::new(b)));
        }
        Ok(c)
    }
    fn or(&mut self) -> Result<Node, String> {
        let mut l = self.and()?;
        while self.eat("||") {
            l = Node::Bin(Bin::Or, Box::new(l), Box::new(self.and()?));
        }
        Ok(l)
    }
    fn and(&mut self) -> Result<Node, String> {
        let mut l = self.cmp()?;
        while self.eat("&&") {
            l = Node::Bin(Bin::And, Box::new(l), Box::new(self.cmp()?));
        }
        Ok(l)
    }
    fn cmp(&mut self) -> Result<Node, String> {
        let l = self.sum()?;
        if self.peek() == Some(&Tok::Name("in".into())) {
            self.at += 1;
            self.expect("[")?;
            let mut set = vec![self.expr()?];
            while self.eat(",") {
                set.push(self.expr()?);
            }
            self.expect("]")?;
            return Ok(Node::In(Box::new(l), set));
        }
        for (op, bin) in [
            ("==", Bin::Eq),
            ("!=", Bin::Ne),
            ("<=", Bin::Le),
            (">=", Bin::Ge),
            ("<", Bin::Lt),
            (">", Bin::Gt),
        ] {
            if self.eat(op) {
                return Ok(Node::Bin(bin, Box::new(l), Box::new(self.sum()?)));
            }
        }
        Ok(l)
    }
    fn sum(&mut self) -> Result<Node, String> {
        let mut l = self.product()?;
        loop {
            let bin = if self.eat("+") {
                Bin::Add
            } else if self.eat("-") {
                Bin::Sub
            } else {
                return Ok(l);
            };
            l = Node::Bin(bin, Box::new(l), Box::new(self.product()?));
        }
    }
    fn product(&mut self) -> Result<Node, String> {
        let mut l = self.unary()?;
        loop {
            let bin = if self.eat("*") {
                Bin::Mul
            } else if self.eat("/") {
                Bin::Div
            } else if self.eat("%") {
                Bin::Rem
            } else {
                return Ok(l);
            };
            l = Node::Bin(bin, Box::new(l), Box::new(self.unary()?));
        }
    }
    fn unary(&mut self) -> Result<Node, String> {
        if self.eat("!") {
            return Ok(Node::Not(Box::new(self.unary()?)));
        }
        if self.eat("-") {
            return Ok(Node::Neg(Box::new(self.unary()?)));
        }
        self.primary()
    }
    fn primary(&mut self) -> Result<Node, String> {
        match self.peek().cloned() {
            Some(Tok::Int(v)) => {
                self.at += 1;
                Ok(Node::Int(v))
            }
            Some(Tok::Name(n)) => {
                self.at += 1;
                match n.as_str() {
                    "true" => return Ok(Node::Bool(true)),
                    "false" => return Ok(Node::Bool(false)),
                    _ => {}
                }
                if self.eat("(") {
                    if !matches!(n.as_str(), "min" | "max") {
                        return Err(format!(
                            "unknown function `{n}`; the functions are min and max"
                        ));
                    }
                    let mut args = vec![self.expr()?];
                    while self.eat(",") {
                        args.push(self.expr()?);
                    }
                    self.expect(")")?;
                    return Ok(Node::Call(n, args));
                }
                Ok(Node::Var(n))
            }
            Some(Tok::Op("(")) => {
                self.at += 1;
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            _ => Err(format!("expected a number, a name or `(`{}", self.found())),
        }
    }
}

/// The `&'static str` of an operator token (the lexer only yields those of `OPS`).
fn leak(op: &str) -> &'static str {
    OPS.iter().find(|o| **o == op).copied().unwrap_or("")
}

/// Why a formula could not be evaluated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EvalError {
    /// A name no value is given for.
    Unknown(String),
    /// A division or remainder by zero.
    DivisionByZero,
    /// An integer result outside `i64`.
    Overflow,
    /// An integer where a boolean is needed, or the other way round.
    Type(&'static str),
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::Unknown(n) => write!(f, "`{n}` is not a known value"),
            EvalError::DivisionByZero => f.write_str("divides by zero"),
            EvalError::Overflow => f.write_str("overflows a 64-bit integer"),
            EvalError::Type(what) => write!(f, "needs {what}"),
        }
    }
}

fn int(v: Value) -> Result<i64, EvalError> {
    match v {
        Value::Int(i) => Ok(i),
        Value::Bool(_) => Err(EvalError::Type("an integer, not a boolean")),
    }
}

fn boolean(v: Value) -> Result<bool, EvalError> {
    match v {
        Value::Bool(b) => Ok(b),
        Value::Int(_) => Err(EvalError::Type("a boolean (a comparison), not an integer")),
    }
}

fn eval(node: &Node, env: &dyn Fn(&str) -> Option<Value>) -> Result<Value, EvalError> {
    let ev = |n: &Node| eval(n, env);
    Ok(match node {
        Node::Int(v) => Value::Int(*v),
        Node::Bool(b) => Value::Bool(*b),
        Node::Var(n) => env(n).ok_or_else(|| EvalError::Unknown(n.clone()))?,
        Node::Not(a) => Value::Bool(!boolean(ev(a)?)?),
        Node::Neg(a) => Value::Int(int(ev(a)?)?.checked_neg().ok_or(EvalError::Overflow)?),
        Node::Cond(c, a, b) => {
            if boolean(ev(c)?)? {
                ev(a)?
            } else {
                ev(b)?
            }
        }
        Node::In(x, set) => {
            let x = ev(x)?;
            let mut found = false;
            for s in set {
                found |= ev(s)? == x;
            }
            Value::Bool(found)
        }
        Node::Call(f, args) => {
            let mut vals = Vec::with_capacity(args.len());
            for a in args {
                vals.push(int(ev(a)?)?);
            }
            let v = if f == "min" {
                vals.iter().min()
            } else {
                vals.iter().max()
            };
            Value::Int(*v.unwrap_or(&0))
        }
        Node::Bin(Bin::Or, a, b) => Value::Bool(boolean(ev(a)?)? || boolean(ev(b)?)?),
        Node::Bin(Bin::And, a, b) => Value::Bool(boolean(ev(a)?)? && boolean(ev(b)?)?),
        Node::Bin(Bin::Eq, a, b) => Value::Bool(ev(a)? == ev(b)?),
        Node::Bin(Bin::Ne, a, b) => Value::Bool(ev(a)? != ev(b)?),
        Node::Bin(op, a, b) => {
            let (x, y) = (int(ev(a)?)?, int(ev(b)?)?);
            match op {
                Bin::Lt => Value::Bool(x < y),
                Bin::Le => Value::Bool(x <= y),
                Bin::Gt => Value::Bool(x > y),
                Bin::Ge => Value::Bool(x >= y),
                Bin::Add => Value::Int(x.checked_add(y).ok_or(EvalError::Overflow)?),
                Bin::Sub => Value::Int(x.checked_sub(y).ok_or(EvalError::Overflow)?),
                Bin::Mul => Value::Int(x.checked_mul(y).ok_or(EvalError::Overflow)?),
                Bin::Div | Bin::Rem if y == 0 => return Err(EvalError::DivisionByZero),
                Bin::Div => Value::Int(x.checked_div(y).ok_or(EvalError::Overflow)?),
                Bin::Rem => Value::Int(x.checked_rem(y).ok_or(EvalError::Overflow)?),
                Bin::Or | Bin::And | Bin::Eq | Bin::Ne => unreachable!("handled above"),
            }
        }
    })
}

fn collect_vars<'a>(node: &'a Node, out: &mut Vec<&'a str>) {
    match node {
        Node::Var(n) => {
            if !out.contains(&n.as_str()) {
                out.push(n);
            }
        }
        Node::Not(a) | Node::Neg(a) => collect_vars(a, out),
        Node::Bin(_, a, b) => {
            collect_vars(a, out);
            collect_vars(b, out);
        }
        Node::Cond(a, b, c) => {
            collect_vars(a, out);
            collect_vars(b, out);
            collect_vars(c, out);
        }
        Node::In(x, set) => {
            collect_vars(x, out);
            set.iter().for_each(|s| collect_vars(s, out));
        }
        Node::Call(_, args) => args.iter().for_each(|a| collect_vars(a, out)),
        Node::Int(_) | Node::Bool(_) => {}
    }
}

impl Formula {
    /// Parses `text`; the error says what was expected where.
    pub fn parse(text: &str) -> Result<Formula, String> {
        let toks = lex(text)?;
        if toks.is_empty() {
            return Err("is empty".into());
        }
        let mut p = Parser { toks, at: 0 };
        let node = p.expr()?;
        if p.at != p.toks.len() {
            return Err(format!("has more after the expression{}", p.found()));
        }
        Ok(Formula {
            text: text.trim().to_string(),
            node,
        })
    }

    /// The formula as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Evaluates it with the values `env` gives for names.
    pub fn eval(&self, env: &dyn Fn(&str) -> Option<Value>) -> Result<Value, EvalError> {
        eval(&self.node, env)
    }

    /// Evaluates it to an integer.
    pub fn eval_int(&self, env: &dyn Fn(&str) -> Option<Value>) -> Result<i64, EvalError> {
        int(self.eval(env)?)
    }

    /// Evaluates it to a boolean.
    pub fn eval_bool(&self, env: &dyn Fn(&str) -> Option<Value>) -> Result<bool, EvalError> {
        boolean(self.eval(env)?)
    }

    /// The names it reads, in order of first use.
    pub fn names(&self) -> Vec<&str> {
        let mut v = Vec::new();
        collect_vars(&self.node, &mut v);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<Value> {
        match name {
            "m" => Some(Value::Int(128)),
            "consumers" => Some(Value::Int(2)),
            "n" => Some(Value::Int(32)),
            "zero" => Some(Value::Int(0)),
            "a_k_major" => Some(Value::Bool(false)),
            _ => None,
        }
    }

    fn ev(text: &str) -> Result<Value, EvalError> {
        Formula::parse(text).unwrap().eval(&env)
    }

    #[test]
    fn arithmetic_follows_c_precedence() {
        assert_eq!(ev("1 + 2 * 3"), Ok(Value::Int(7)));
        assert_eq!(ev("(1 + 2) * 3"), Ok(Value::Int(9)));
        assert_eq!(ev("128 * (1 + consumers)"), Ok(Value::Int(384)));
        assert_eq!(ev("7 / 2 + 7 % 2 - -1"), Ok(Value::Int(5)));
        assert_eq!(ev("m == 64 * consumers"), Ok(Value::Bool(true)));
        assert_eq!(ev("n in [16, 32, 64] && !a_k_major"), Ok(Value::Bool(true)));
        assert_eq!(ev("a_k_major ? 64 : n"), Ok(Value::Int(32)));
        assert_eq!(ev("n % 64 == 0 || n <= 32"), Ok(Value::Bool(true)));
        assert_eq!(ev("min(m, n, 100) + max(1, 2)"), Ok(Value::Int(34)));
        assert_eq!(ev("1 < 2 ? 3 : 4 > 5 ? 6 : 7"), Ok(Value::Int(3)));
    }

    #[test]
    fn errors_are_values_not_panics() {
        assert_eq!(ev("m / zero"), Err(EvalError::DivisionByZero));
        assert_eq!(ev("m % zero"), Err(EvalError::DivisionByZero));
        assert_eq!(ev("9223372036854775807 + 1"), Err(EvalError::Overflow));
        assert_eq!(ev("stages + 1"), Err(EvalError::Unknown("stages".into())));
        assert!(matches!(ev("m && true"), Err(EvalError::Type(_))));
        assert!(matches!(ev("!m"), Err(EvalError::Type(_))));
        assert!(matches!(ev("1 ? 2 : 3"), Err(EvalError::Type(_))));
    }

    #[test]
    fn parse_errors_say_what_was_expected() {
        assert!(Formula::parse("").unwrap_err().contains("empty"));
        assert!(Formula::parse("1 +").unwrap_err().contains("at the end"));
        assert!(Formula::parse("m == 64 consumers")
            .unwrap_err()
            .contains("found `consumers`"));
        assert!(Formula::parse("pow(2, 3)")
            .unwrap_err()
            .contains("unknown function"));
        assert!(Formula::parse("m $ 2")
            .unwrap_err()
            .contains("unexpected `$`"));
        assert!(Formula::parse("n in [1, 2")
            .unwrap_err()
            .contains("expected `]`"));
    }

    #[test]
    fn names_are_listed_once_in_order() {
        let f = Formula::parse("m == 64 * consumers && m > n + consumers").unwrap();
        assert_eq!(f.names(), ["m", "consumers", "n"]);
        assert_eq!(f.text(), "m == 64 * consumers && m > n + consumers");
    }
}
