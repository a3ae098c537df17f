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

pub struct Engine {
    pub srv: Server,
    pub commands: CommandTable,
}

impl Engine {
    /// The command table, and the state for `cfg` with statistics for
    /// each of the table's commands.
    pub fn new(cfg: Config) -> Engine {
        let commands = CommandTable::build();
        let srv = Server::new(cfg, commands.len());
        Engine { srv, commands }
    }
}
