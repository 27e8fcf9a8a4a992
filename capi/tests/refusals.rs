//! The C functions' refusals that need no device, called as C calls them: each returns its
//! status, keeps a message naming what was wrong, and writes nothing.

use gemm_aot::*;
use std::ffi::CStr;
use std::ptr::{null, null_mut};

fn message() -> String {
    // SAFETY: gemm_aot_last_error returns a NUL-terminated string.
    unsafe { CStr::from_ptr(gemm_aot_last_error()) }
        .to_string_lossy()
        .into_owned()
}

fn args() -> gemm_aot_gemm_args {
    gemm_aot_gemm_args {
        op: GEMM_AOT_OP_NN,
        ab_dtype: GEMM_AOT_BF16,
        c_dtype: GEMM_AOT_F32,
        policy: GEMM_AOT_POLICY_DEFAULT,
        mode: GEMM_AOT_MODE_DETERMINISTIC,
        m: 4,
        n: 64,
        k: 32,
        a: 0x10_0000 as *const _,
        lda: 32,
        b: 0x20_0000 as *const _,
        ldb: 64,
        bias: null(),
        c: 0x30_0000 as *mut _,
        ldc: 64,
        beta: 0.0,
    }
}

/// `gemm_aot_gemm` on a NULL context: the argument checks come first, then the context.
fn call(a: &gemm_aot_gemm_args) -> i32 {
    let mut launch = gemm_aot_launch {
        kernel: 77,
        ..Default::default()
    };
    // SAFETY: a NULL context is refused; the pointers are never dereferenced on the host.
    let status = unsafe { gemm_aot_gemm(null_mut(), a, null_mut(), &mut launch) };
    assert_eq!(launch.kernel, 77, "a refused call wrote its launch");
    status
}

/// One change to a good call.
type Edit = Box<dyn Fn(&mut gemm_aot_gemm_args)>;

#[test]
fn bad_arguments_are_refused_by_status_and_message() {
    let cases: Vec<(Edit, i32, &str)> = vec![
        (
            Box::new(|a| a.op = 7),
            GEMM_AOT_ERROR_INVALID_ARGUMENT,
            "op = 7",
        ),
        (
            Box::new(|a| a.ab_dtype = 9),
            GEMM_AOT_ERROR_INVALID_ARGUMENT,
            "ab_dtype = 9",
        ),
        (
            Box::new(|a| a.policy = -1),
            GEMM_AOT_ERROR_INVALID_ARGUMENT,
            "policy = -1",
        ),
        (
            Box::new(|a| a.mode = 5),
            GEMM_AOT_ERROR_INVALID_ARGUMENT,
            "mode = 5",
        ),
        (
            Box::new(|a| a.lda = 31),
            GEMM_AOT_ERROR_SHAPE,
            "leading dimension of A is 31",
        ),
        (
            Box::new(|a| a.m = 1 << 31),
            GEMM_AOT_ERROR_SHAPE,
            "m = 2147483648",
        ),
        (
            Box::new(|a| a.b = null()),
            GEMM_AOT_ERROR_POINTER,
            "B is a null pointer",
        ),
        (
            Box::new(|a| a.c = 0x30_0002 as *mut _),
            GEMM_AOT_ERROR_POINTER,
            "not aligned to 4 bytes",
        ),
        (
            Box::new(|a| a.c = 0x10_0010 as *mut _),
            GEMM_AOT_ERROR_OVERLAP,
            "overlaps input A",
        ),
        (
            Box::new(|a| a.bias = 0x30_0000 as *const _),
            GEMM_AOT_ERROR_OVERLAP,
            "overlaps input bias",
        ),
    ];
    for (edit, status, needle) in cases {
        let mut a = args();
        edit(&mut a);
        let got = call(&a);
        let msg = message();
        assert_eq!(got, status, "{msg}");
        assert!(msg.contains(needle), "{needle:?} not in {msg:?}");
    }
    // A well-formed call reaches the context, which is NULL here.
    assert_eq!(call(&args()), GEMM_AOT_ERROR_INVALID_ARGUMENT);
    assert!(message().contains("context is NULL"), "{}", message());
}

#[test]
fn null_structs_and_outputs_are_refused() {
    // SAFETY: every pointer is NULL, which each function refuses.
    unsafe {
        assert_eq!(
            gemm_aot_gemm(null_mut(), null(), null_mut(), null_mut()),
            GEMM_AOT_ERROR_INVALID_ARGUMENT
        );
        assert!(message().contains("args is NULL"));
        assert_eq!(
            gemm_aot_open(0, null_mut()),
            GEMM_AOT_ERROR_INVALID_ARGUMENT
        );
        assert!(message().contains("out is NULL"));
        let mut ctx = null_mut();
        assert_eq!(gemm_aot_open(-1, &mut ctx), GEMM_AOT_ERROR_INVALID_ARGUMENT);
        assert!(ctx.is_null());
        assert!(gemm_aot_tier(null()).is_null());
        gemm_aot_close(null_mut());
    }
}

#[test]
fn a_batch_is_checked_entry_by_entry_before_any_launch() {
    // Entry 0 is fine; entry 1's C, one C stride on, lands on B: refused, naming the entry.
    let mut a = args();
    a.a = 0x50_0000 as *const _;
    a.c = 0x10_0000 as *mut _;
    let stride_c = 0x10_0000 / 4; // elements of f32
                                  // SAFETY: a NULL context; nothing is dereferenced.
    let status = unsafe { gemm_aot_bmm(null_mut(), &a, 2, 0, 0, stride_c, null_mut(), null_mut()) };
    assert_eq!(status, GEMM_AOT_ERROR_OVERLAP, "{}", message());
    assert!(message().starts_with("batch entry 1:"), "{}", message());
}

#[test]
fn open_says_whether_a_driver_is_there() {
    // SAFETY: only probes whether the driver library can be opened.
    let driver = unsafe { gemm_runtime::cudarc::driver::sys::is_culib_present() };
    let mut ctx = null_mut();
    // SAFETY: ctx is writable.
    let status = unsafe { gemm_aot_open(0, &mut ctx) };
    if driver {
        // A driver: the device opens, or no tier serves it; either way the status says so.
        assert!(
            (status == GEMM_AOT_OK) != ctx.is_null(),
            "status {status} with context {ctx:?}: {}",
            message()
        );
        assert!(
            [GEMM_AOT_OK, GEMM_AOT_ERROR_NO_DEVICE, GEMM_AOT_ERROR_CUDA].contains(&status),
            "{status}: {}",
            message()
        );
        // SAFETY: NULL or the context just opened.
        unsafe { gemm_aot_close(ctx) };
    } else {
        assert_eq!(status, GEMM_AOT_ERROR_NO_DRIVER, "{}", message());
        assert!(ctx.is_null());
        assert!(message().contains("no CUDA driver found"), "{}", message());
    }
}

#[test]
fn every_status_has_its_header_name() {
    for (code, name) in [
        (GEMM_AOT_OK, "GEMM_AOT_OK"),
        (GEMM_AOT_ERROR_OVERLAP, "GEMM_AOT_ERROR_OVERLAP"),
        (GEMM_AOT_ERROR_INTERNAL, "GEMM_AOT_ERROR_INTERNAL"),
        (99, "unknown status"),
    ] {
        // SAFETY: a static NUL-terminated string.
        let got = unsafe { CStr::from_ptr(gemm_aot_status_name(code)) };
        assert_eq!(got.to_str().unwrap(), name);
    }
    let header = include_str!("../include/gemm_aot.h");
    for code in 0..=GEMM_AOT_ERROR_INTERNAL {
        // SAFETY: as above.
        let name = unsafe { CStr::from_ptr(gemm_aot_status_name(code)) };
        let name = name.to_str().unwrap();
        assert!(
            header.contains(&format!("#define {name} {code}\n")),
            "{name} = {code} is not in the header"
        );
    }
    // SAFETY: a static NUL-terminated string.
    let version = unsafe { CStr::from_ptr(gemm_aot_version()) };
    assert_eq!(version.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
}

#[test]
fn row_calls_are_refused_by_status_and_message() {
    let call = |op: i32, ld_src: u64, dst: usize| {
        // SAFETY: a NULL context; the addresses are never dereferenced on the host.
        unsafe {
            gemm_aot_rows(
                null_mut(),
                op,
                GEMM_AOT_F32,
                GEMM_AOT_F32,
                0x10_0000 as *const _,
                ld_src,
                dst as *mut _,
                64,
                4,
                64,
                null_mut(),
            )
        }
    };
    assert_eq!(call(9, 64, 0x30_0000), GEMM_AOT_ERROR_INVALID_ARGUMENT);
    assert!(message().contains("op = 9"), "{}", message());
    assert_eq!(call(GEMM_AOT_ROW_MEAN, 63, 0x30_0000), GEMM_AOT_ERROR_SHAPE);
    assert!(
        message().contains("leading dimension of A is 63"),
        "{}",
        message()
    );
    assert_eq!(
        call(GEMM_AOT_ROW_SOFTMAX, 64, 0x10_0040),
        GEMM_AOT_ERROR_OVERLAP
    );
    assert_eq!(
        call(GEMM_AOT_ROW_LOG_SOFTMAX, 64, 0x30_0000),
        GEMM_AOT_ERROR_INVALID_ARGUMENT
    );
    assert!(message().contains("context is NULL"), "{}", message());
}
