//! `lembas-reader`: reads an HTML page or a PDF that `web_fetch` brought back, in a process of its
//! own — so their parsers' tables are not loaded into every lembas at start, and a document that
//! makes a parser panic, loop or swell ends here, at lembas' time limit, not in lembas.

fn main() -> std::process::ExitCode {
    lembas_web::reader::serve_one()
}
