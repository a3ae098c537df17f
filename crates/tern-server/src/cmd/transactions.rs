//! transactions commands.

use super::table::CommandSpec;

pub static COMMANDS: &[CommandSpec] = &[];
