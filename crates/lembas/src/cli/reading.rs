//! The command line read before and beside clap: a mistyped command, `-p` standing for `run`,
//! and the whole tree a completion script is written from.

use super::Cli;

/// The whole command tree, for a completion script. Each command's arguments and the commands
/// under it are made only when that command is the one given (`defer`: the command line is read
/// in half the time), so here the tree is built whole first; and the `help` command's
/// copy of the tree, taken before the commands under each were made, is taken again from it.
pub fn whole_command() -> clap::Command {
    let mut command = <Cli as clap::CommandFactory>::command();
    command.build();
    with_whole_help(command)
}

/// `command` with the `help` under it (and under each command below) naming the whole tree.
fn with_whole_help(command: clap::Command) -> clap::Command {
    let names: Vec<String> =
        command.get_subcommands().map(|c| c.get_name().to_owned()).filter(|name| name != "help").collect();
    let mut command = names.iter().fold(command, |command, name| command.mut_subcommand(name, with_whole_help));
    if command.find_subcommand("help").is_some() {
        let help_bin = format!("{} help", command.get_bin_name().unwrap_or(command.get_name()));
        let copies: Vec<clap::Command> =
            command.get_subcommands().filter(|c| c.get_name() != "help").map(|c| help_copy(c, &help_bin)).collect();
        command = command.mut_subcommand("help", |help| {
            let help_of_help = help.find_subcommand("help").cloned();
            bare_command(&help, help_bin.clone()).subcommands(copies).subcommands(help_of_help)
        });
    }
    command
}

/// A command of `command`'s name and about, named `bin` in usage lines, with none of the
/// help flags, version flags or `help` command clap would add: what `help`'s tree is made of.
fn bare_command(command: &clap::Command, bin: String) -> clap::Command {
    let bare = clap::Command::new(command.get_name().to_owned())
        .bin_name(bin)
        .disable_help_flag(true)
        .disable_version_flag(true)
        .disable_help_subcommand(true);
    match command.get_about() {
        Some(about) => bare.about(about.clone()),
        None => bare,
    }
}

/// A command as `help` names it (under `parent_bin`): its name, what it is for, and the
/// commands under it.
fn help_copy(command: &clap::Command, parent_bin: &str) -> clap::Command {
    let bin = format!("{parent_bin} {}", command.get_name());
    let under: Vec<clap::Command> =
        command.get_subcommands().filter(|c| c.get_name() != "help").map(|c| help_copy(c, &bin)).collect();
    bare_command(command, bin).hide(command.is_hide_set()).subcommands(under)
}

/// A first word that looks like a mistyped command (`lembas sesions`) rather than a prompt:
/// the command it comes nearest, when it is the only word and a letter or two off one.
pub fn mistyped_command(args: &[std::ffi::OsString]) -> Option<String> {
    let [_, word] = args else { return None };
    let word = word.to_str()?;
    if word.starts_with('-') || word.contains(char::is_whitespace) || word.len() < 3 {
        return None;
    }
    let names = command_names();
    if names.iter().any(|name| name == word) {
        return None;
    }
    names
        .into_iter()
        .map(|name| (strsim::damerau_levenshtein(word, &name), name))
        .filter(|(d, name)| *d > 0 && *d <= (name.len() / 4).clamp(1, 2))
        .min()
        .map(|(_, name)| name)
}

/// The names of lembas' commands (`run`, `sessions`, `help`, …).
fn command_names() -> Vec<String> {
    <Cli as clap::CommandFactory>::command().get_subcommands().map(|c| c.get_name().to_owned()).collect()
}

/// The command line with `-p`/`--print` read as the `run` it stands for: `lembas --model M -p
/// "hi" --output-format json` is `lembas run --model M "hi" --output-format json`. Only a `-p`
/// before any command counts (`lembas run -p` stays an error of `run`'s), and a word after `--`
/// is a prompt's.
pub fn print_as_run(args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    // Most command lines have no `-p`: they are not worth the command table's making at start.
    if !args.iter().any(|a| a == "-p" || a == "--print") {
        return args;
    }
    let commands = command_names();
    let at = args.iter().skip(1).position(|a| {
        a == "-p" || a == "--print" || a == "--" || a.to_str().is_some_and(|w| commands.iter().any(|c| c == w))
    });
    match at.map(|i| i + 1) {
        Some(i) if args[i] == "-p" || args[i] == "--print" => {
            let mut out = args;
            out.remove(i);
            out.insert(1, "run".into());
            out
        }
        _ => args,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command's arguments are made only when it is given, so clap's checks of them (two
    /// arguments of one name, a conflict naming nothing) would otherwise wait for someone to
    /// give that command: here the whole tree is built and checked.
    #[test]
    fn the_whole_command_line_is_well_formed() {
        <Cli as clap::CommandFactory>::command().debug_assert();
        whole_command().debug_assert();
    }
}
