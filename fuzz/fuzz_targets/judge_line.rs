//! Judging any line never panics, and `rm -rf /` appended to any line after a separator is
//! always refused, in auto mode too.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use lembas_permissions::{Call, Context, Decision, Judge, Mode};

fuzz_target!(|data: &[u8]| {
    let Ok(prefix) = std::str::from_utf8(data) else { return };
    // A prefix that leaves a quote or a here-document open swallows what follows, as a shell would.
    if prefix.contains(['\'', '"', '`', '\\', '#', '<']) || prefix.contains("$(") {
        return;
    }
    let judge = Judge::with_defaults(Context { root: "/p".into(), home: Some("/home/u".into()), ..Context::default() });
    let line = format!("{prefix}\nrm -rf /");
    let call = Call::new("bash", lembas_spec::RiskClass::Execute, Some(&line), &[]);
    let decision = judge.evaluate(Mode::Auto, &call, Path::new("/p"), &Path::to_path_buf);
    assert!(matches!(decision, Decision::Refuse(_)), "{line:?} → {decision:?}");
});
