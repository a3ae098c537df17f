//! Replication's two sides. The stream itself — encoded from effect
//! records by the AOF writer, its backlog and the replicas' queues — is
//! state the commands read too (ROLE, INFO replication, WAIT), so it is
//! `tern_commands::repl`; the links are here.

pub mod master;
pub mod replica;
