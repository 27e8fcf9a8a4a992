//! The generated C header of the argument-ABI structs, with layout `static_assert`s and each
//! struct's flag bits as constants (`Args::kFlagBias`), so templates take the bits from the
//! specs.

use super::Provenance;
use gemm_spec::{Abi, FieldType, SpecSet};
use std::fmt::Write;

fn c_type(ty: FieldType) -> &'static str {
    match ty {
        FieldType::ConstPtr => "const void*",
        FieldType::MutPtr => "void*",
        FieldType::I32 => "int",
        FieldType::U32 => "unsigned int",
        FieldType::I64 => "long long",
        FieldType::U64 => "unsigned long long",
        FieldType::F32 => "float",
        FieldType::TensorMap => "CUtensorMap",
    }
}

fn emit_struct(out: &mut String, abi: &Abi) {
    if !abi.doc.is_empty() {
        let _ = writeln!(out, "// {}", abi.doc);
    }
    let _ = writeln!(out, "struct {} {{", abi.name);
    for f in &abi.fields {
        let doc = if f.doc.is_empty() {
            String::new()
        } else {
            format!("  // {}", f.doc)
        };
        let _ = writeln!(out, "    {} {};{doc}", c_type(f.ty), f.name);
    }
    for flag in &abi.flags {
        let doc = if flag.doc.is_empty() {
            format!("flags bit {}", flag.name)
        } else {
            flag.doc.trim_end_matches('.').to_string()
        };
        let _ = writeln!(
            out,
            "    static constexpr unsigned {} = 1u << {};  // {doc} (set when {} is present)",
            flag.constant(),
            flag.bit,
            flag.set
        );
    }
    let _ = writeln!(out, "}};");
    let _ = writeln!(
        out,
        "static_assert(sizeof({0}) == {1}, \"{0}: size must be {1} bytes, as the Rust side expects\");",
        abi.name, abi.size
    );
    let _ = writeln!(
        out,
        "static_assert(alignof({0}) == {1}, \"{0}: alignment must be {1}\");",
        abi.name, abi.align
    );
    for f in &abi.fields {
        let _ = writeln!(
            out,
            "static_assert(offsetof({0}, {1}) == {2}, \"{0}.{1} must sit at byte {2}\");",
            abi.name, f.name, f.offset
        );
    }
    out.push('\n');
}

/// `gemm_abi.h`: every ABI struct of the specs.
pub fn abi_header(specs: &SpecSet, prov: &Provenance) -> String {
    let mut out = prov.header_line();
    out.push_str("// Kernel argument structs, passed by value; layout asserted here and in the generated Rust.\n");
    out.push_str("#pragma once\n#include <cstddef>\n");
    if specs.abis.values().any(|a| a.has_tensor_map()) {
        // CUtensorMap: 128 bytes, 128-byte aligned (CUDA 13), filled by cuTensorMapEncodeTiled.
        out.push_str("#include <cuda.h>\n");
    }
    out.push('\n');
    out.push_str(
        "static_assert(sizeof(void*) == 8, \"gemm-aot kernels need 64-bit device pointers\");\n\n",
    );
    for abi in specs.abis.values() {
        emit_struct(&mut out, abi);
    }
    out
}
