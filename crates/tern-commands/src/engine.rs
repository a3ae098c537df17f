//! What every worker executes requests against: the shared state
//! ([`Server`]) and the command table ([`CommandTable`]), side by side.
//!
//! They are two values rather than one because the handlers reach the
//! state (`cmd::Ctx::srv`): a table inside the state would make the state
//! depend on the commands and the commands on the state. A worker holds
//! one `Arc<Engine>` and hands each command both halves as references
//! (`cmd::Conn`), so the split costs no indirection on the request path.

use tern_config::Config;

use crate::cmd::table::CommandTable;
use crate::server::Server;

/// The command families of layers above `cmd`.
const ABOVE: &[&[crate::cmd::table::CommandSpec]] = crate::script::FAMILIES;

pub struct Engine {
    pub srv: Server,
    /// The commands as clients name them (`rename-command` applied).
    pub commands: CommandTable,
    /// The commands by their own names, for the AOF loader: the AOF names
    /// every write as Redis does, whatever clients call it.
    pub original: CommandTable,
}

impl Engine {
    /// The command table, and the state for `cfg` with statistics for
    /// each of the table's commands.
    pub fn new(cfg: Config) -> Engine {
        match Engine::try_new(cfg) {
            Ok(e) => e,
            Err(e) => panic!("{e}"),
        }
    }

    /// [`Engine::new`], or the fatal error of a `rename-command` line that
    /// names no command or a name already taken.
    pub fn try_new(cfg: Config) -> Result<Engine, String> {
        let mut commands = CommandTable::build_with(ABOVE);
        for line in &cfg.renames {
            let (from, to) = (line.words[0].as_bytes(), line.words[1].as_bytes());
            commands.rename(from, to).map_err(|why| line.fatal("rename-command", why))?;
        }
        let requirepass = cfg.requirepass.clone();
        let srv = Server::new(cfg, commands.len());
        srv.acl.init(commands.acl_catalog(), requirepass.as_deref());
        srv.scripts.set_library_loader(crate::script::load_libraries_into);
        Ok(Engine { srv, commands, original: CommandTable::build_with(ABOVE) })
    }
}
