//! Template lookup shared by families and conversions: the named template must have a kind
//! manifest in the templates folder (`SpecSet::kinds`), of the owner's role (a GEMM template for
//! a family, an elementwise conversion for a conversion).

use super::Sink;
use crate::error::{Location, SpecErrorKind};
use crate::kinds::{Kind, KindLibrary, Role};

/// The kind of a family's (`Role::Gemm`) or a conversion's template; `None` (after an error)
/// when the folder has no manifest of that role for it.
pub(super) fn check_template<'k>(
    sink: &mut Sink,
    kinds: &'k KindLibrary,
    at: &Location,
    owner: &str,
    name: &str,
    role: Role,
) -> Option<&'k Kind> {
    let Some(k) = kinds.get(name) else {
        sink.push(
            at.clone(),
            SpecErrorKind::UnknownTemplate {
                owner: owner.to_string(),
                name: name.to_string(),
                suggestion: kinds.closest(name, role).map(str::to_string),
                known: kinds.listing(role),
            },
        );
        return None;
    };
    if k.role != role {
        let (is, needs) = match role {
            Role::Gemm => (
                "an elementwise conversion template",
                "a family needs a GEMM template",
            ),
            Role::Conversion => (
                "a GEMM template",
                "a conversion needs a conversion template",
            ),
        };
        sink.push(
            at.clone(),
            SpecErrorKind::TemplateMismatch {
                owner: owner.to_string(),
                template: name.to_string(),
                problem: format!("is {is}; {needs}: {}", kinds.listing(role)),
            },
        );
        return None;
    }
    Some(k)
}
