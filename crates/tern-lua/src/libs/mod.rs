//! The libraries Redis loads into its Lua state beside Lua's own, each
//! written here in Rust with the outputs Redis's C versions give for the
//! same inputs.
