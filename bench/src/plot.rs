//! The bench's picture: ratio to cuBLAS against m, one small panel per (n, k), one line per
//! dtype, the regime's targets drawn as a dashed step, 1.0 as a grey line. Plain SVG, no
//! dependencies, so it opens in any browser and renders on GitHub.

use std::collections::BTreeMap;
use std::fmt::Write;

/// One measured point.
#[derive(Clone, Debug)]
pub struct Point {
    pub n: usize,
    pub k: usize,
    /// Panel title (layers with this shape, regime).
    pub title: String,
    pub dtype: String,
    pub m: usize,
    pub ratio: f64,
    pub target: Option<f64>,
}

const PANEL_W: f64 = 260.0;
const PANEL_H: f64 = 170.0;
const COLUMNS: usize = 4;
const Y_MAX: f64 = 1.5;
const MARGIN: (f64, f64, f64, f64) = (34.0, 10.0, 34.0, 26.0); // left, right, top, bottom

fn color(dtype: &str) -> &'static str {
    match dtype {
        "bf16" => "#1f77b4",
        "f16" => "#ff7f0e",
        "f32" => "#2ca02c",
        _ => "#7f7f7f",
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The SVG document for `points`, titled `title`.
pub fn svg(title: &str, points: &[Point]) -> String {
    let mut panels: BTreeMap<(usize, usize), Vec<&Point>> = BTreeMap::new();
    let mut order: Vec<(usize, usize)> = Vec::new();
    for p in points {
        let key = (p.n, p.k);
        if !panels.contains_key(&key) {
            order.push(key);
        }
        panels.entry(key).or_default().push(p);
    }
    let rows = order.len().div_ceil(COLUMNS).max(1);
    let (width, height) = (
        PANEL_W * COLUMNS as f64,
        40.0 + PANEL_H * rows as f64 + 20.0,
    );
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="9">"#
    );
    let _ = writeln!(
        s,
        r#"<rect width="100%" height="100%" fill="white"/><text x="8" y="18" font-size="13">{}</text>"#,
        escape(title)
    );
    let mut dtypes: Vec<&str> = points.iter().map(|p| p.dtype.as_str()).collect();
    dtypes.sort_unstable();
    dtypes.dedup();
    for (i, d) in dtypes.iter().enumerate() {
        let x = 8.0 + 70.0 * i as f64;
        let _ = writeln!(
            s,
            r#"<line x1="{x}" y1="30" x2="{}" y2="30" stroke="{}" stroke-width="2"/><text x="{}" y="33">{d}</text>"#,
            x + 16.0,
            color(d),
            x + 20.0
        );
    }
    let x0 = 8.0 + 70.0 * dtypes.len() as f64;
    let _ = writeln!(
        s,
        r##"<line x1="{x0}" y1="30" x2="{}" y2="30" stroke="#d62728" stroke-dasharray="4 2"/><text x="{}" y="33">target</text>"##,
        x0 + 16.0,
        x0 + 20.0
    );
    let m_max = points.iter().map(|p| p.m).max().unwrap_or(1).max(2) as f64;
    for (i, key) in order.iter().enumerate() {
        let pts = &panels[key];
        let (ox, oy) = (
            PANEL_W * (i % COLUMNS) as f64,
            40.0 + PANEL_H * (i / COLUMNS) as f64,
        );
        let (l, r, t, b) = MARGIN;
        let (w, h) = (PANEL_W - l - r, PANEL_H - t - b);
        let x = |m: f64| ox + l + w * (m.max(1.0).log2() / m_max.log2());
        let y = |v: f64| oy + t + h * (1.0 - v.clamp(0.0, Y_MAX) / Y_MAX);
        let _ = writeln!(
            s,
            r##"<rect x="{}" y="{}" width="{w}" height="{h}" fill="none" stroke="#999"/>"##,
            ox + l,
            oy + t
        );
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" font-size="10">{} x {}</text><text x="{}" y="{}" fill="#555">{}</text>"##,
            ox + l,
            oy + 12.0,
            key.0,
            key.1,
            ox + l,
            oy + 23.0,
            escape(&truncate(&pts[0].title, 52))
        );
        for v in [0.5, 1.0] {
            let _ = writeln!(
                s,
                r##"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="#bbb"/><text x="{}" y="{}" text-anchor="end">{v:.1}</text>"##,
                ox + l,
                ox + l + w,
                ox + l - 3.0,
                y(v) + 3.0,
                y = y(v)
            );
        }
        let mut ms: Vec<usize> = pts.iter().map(|p| p.m).collect();
        ms.sort_unstable();
        ms.dedup();
        for &m in &ms {
            if m.is_power_of_two() && m.trailing_zeros() % 2 == 0 {
                let _ = writeln!(
                    s,
                    r#"<text x="{}" y="{}" text-anchor="middle">{m}</text>"#,
                    x(m as f64),
                    oy + t + h + 11.0
                );
            }
        }
        // Targets: a dashed segment over each run of m with the same target.
        let mut targets: Vec<(usize, Option<f64>)> = ms
            .iter()
            .map(|&m| (m, pts.iter().find(|p| p.m == m).and_then(|p| p.target)))
            .collect();
        targets.dedup_by_key(|(m, _)| *m);
        let mut run: Option<(usize, usize, f64)> = None;
        let flush = |run: Option<(usize, usize, f64)>, s: &mut String| {
            if let Some((a, b, v)) = run {
                let _ = writeln!(
                    s,
                    r##"<line x1="{}" y1="{yv}" x2="{}" y2="{yv}" stroke="#d62728" stroke-dasharray="4 2"/>"##,
                    x(a as f64) - 2.0,
                    x(b as f64) + 2.0,
                    yv = y(v)
                );
            }
        };
        for &(m, tgt) in &targets {
            run = match (run, tgt) {
                (Some((a, _, v)), Some(t)) if (v - t).abs() < 1e-9 => Some((a, m, v)),
                (prev, Some(t)) => {
                    flush(prev, &mut s);
                    Some((m, m, t))
                }
                (prev, None) => {
                    flush(prev, &mut s);
                    None
                }
            };
        }
        flush(run, &mut s);
        for d in &dtypes {
            let mut line: Vec<&&Point> = pts.iter().filter(|p| p.dtype == *d).collect();
            line.sort_by_key(|p| p.m);
            if line.is_empty() {
                continue;
            }
            let path: Vec<String> = line
                .iter()
                .map(|p| format!("{:.1},{:.1}", x(p.m as f64), y(p.ratio)))
                .collect();
            let _ = writeln!(
                s,
                r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="1.5"/>"#,
                path.join(" "),
                color(d)
            );
            for p in line {
                let missed = p.target.is_some_and(|t| p.ratio < t);
                let _ = writeln!(
                    s,
                    r##"<circle cx="{:.1}" cy="{:.1}" r="2" fill="{}"><title>{d} m={} ratio {:.3}</title></circle>"##,
                    x(p.m as f64),
                    y(p.ratio),
                    if missed { "#d62728" } else { color(d) },
                    p.m,
                    p.ratio
                );
            }
        }
    }
    s.push_str("</svg>\n");
    s
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max - 1).collect();
        t.push('…');
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(n: usize, dtype: &str, m: usize, ratio: f64, target: Option<f64>) -> Point {
        Point {
            n,
            k: 4096,
            title: "Llama <x> & y".into(),
            dtype: dtype.into(),
            m,
            ratio,
            target,
        }
    }

    #[test]
    fn one_panel_per_shape_with_lines_targets_and_misses() {
        let pts = vec![
            point(1024, "bf16", 1, 0.4, Some(0.9)),
            point(1024, "bf16", 1024, 0.95, Some(0.9)),
            point(1024, "f16", 1, 0.5, Some(0.9)),
            point(4096, "bf16", 16, 1.1, Some(1.0)),
            point(4096, "bf16", 4096, 0.99, Some(0.97)),
        ];
        let s = svg("bench", &pts);
        assert!(s.starts_with("<svg") && s.ends_with("</svg>\n"));
        assert_eq!(
            s.matches("fill=\"none\" stroke=\"#999\"").count(),
            2,
            "two panels"
        );
        assert_eq!(s.matches("<polyline").count(), 3, "bf16 and f16, bf16");
        assert_eq!(s.matches("<circle").count(), 5);
        // The two misses (0.4 and 0.5 under 0.9) are drawn red.
        assert_eq!(s.matches("fill=\"#d62728\"").count(), 2);
        // Escaped titles.
        assert!(s.contains("Llama &lt;x&gt; &amp; y"));
        // One target segment for the first panel (0.9 throughout), two for the second.
        assert_eq!(s.matches("stroke-dasharray=\"4 2\"/>").count(), 1 + 3);
    }
}
