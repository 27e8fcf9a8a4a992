//! Template lookup shared by families and conversions: the named template must be one of
//! `templates::KNOWN`, of the owner's kind (GEMM for a family, elementwise conversion for a
//! conversion), and the spec's header must be the one the template lives in.

use super::Sink;
use crate::error::{Location, SpecErrorKind};
use crate::templates::{self, TemplateKind};

/// Looks a family's (`gemm`) or a conversion's template up in [`templates::KNOWN`] and checks
/// its header; `None` (after an error) when it is not a known template of that kind.
pub(super) fn check_template(
    sink: &mut Sink,
    at: &Location,
    owner: &str,
    name: &str,
    header: &str,
    gemm: bool,
) -> Option<&'static templates::KernelTemplate> {
    let Some(t) = templates::find(name) else {
        sink.push(
            at.clone(),
            SpecErrorKind::UnknownTemplate {
                owner: owner.to_string(),
                name: name.to_string(),
                suggestion: templates::closest(name).map(str::to_string),
                known: templates::listing(gemm),
            },
        );
        return None;
    };
    if matches!(t.kind, TemplateKind::Gemm(_)) != gemm {
        let (is, needs) = if gemm {
            (
                "an elementwise conversion template",
                "a family needs a GEMM template",
            )
        } else {
            (
                "a GEMM template",
                "a conversion needs a conversion template",
            )
        };
        sink.push(
            at.clone(),
            SpecErrorKind::TemplateMismatch {
                owner: owner.to_string(),
                template: name.to_string(),
                problem: format!("is {is}; {needs}: {}", templates::listing(gemm)),
            },
        );
        return None;
    }
    if header != t.header {
        sink.push(
            at.clone(),
            SpecErrorKind::TemplateHeader {
                owner: owner.to_string(),
                template: name.to_string(),
                header: header.to_string(),
                expected: t.header.to_string(),
            },
        );
    }
    Some(t)
}
