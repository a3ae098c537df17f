//! Publish/subscribe's commands: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE,
//! PUNSUBSCRIBE, SSUBSCRIBE, SUNSUBSCRIBE, PUBLISH, SPUBLISH and PUBSUB.
//! The directory and the delivery of messages are `crate::messaging`; the
//! worker writes what a subscriber's inbox holds at the end of its turn.
//!
//! Redis's shapes: each (un)subscription is its own three-element reply
//! (a push in RESP3) with the client's count after it; an unsubscribe of
//! everything when there is nothing replies once with a null name.

use tern_resp::Args;

use super::keyspec::{index, ks, range, KeySpec, NOT_KEY};
use super::table::{flags::*, Channels, CommandSpec};
use super::Ctx;
use crate::errors;
use crate::messaging::pubsub::{Kind, Subscriptions};

const SUB: u32 = PUBSUB | NOSCRIPT | LOADING | STALE;
const SHARD_CHANNELS: &[KeySpec] = &[ks(NOT_KEY, index(1), range(-1, 1, 0))];
const SHARD_CHANNEL: &[KeySpec] = &[ks(NOT_KEY, index(1), range(0, 1, 0))];

pub static COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("subscribe", -2, SUB, &[], subscribe)
        .doc("pubsub", "Listens for messages published to channels.", "2.0.0", "O(N) where N is the number of channels to subscribe to.")
        .acl(&["pubsub", "slow"])
        .channels(Channels::All),
    CommandSpec::new("unsubscribe", -1, SUB, &[], unsubscribe)
        .doc("pubsub", "Stops listening to messages posted to channels.", "2.0.0", "O(N) where N is the number of channels to unsubscribe.")
        .acl(&["pubsub", "slow"]),
    CommandSpec::new("psubscribe", -2, SUB, &[], psubscribe)
        .doc("pubsub", "Listens for messages published to channels that match one or more patterns.", "2.0.0", "O(N) where N is the number of patterns to subscribe to.")
        .acl(&["pubsub", "slow"])
        .channels(Channels::Patterns),
    CommandSpec::new("punsubscribe", -1, SUB, &[], punsubscribe)
        .doc("pubsub", "Stops listening to messages published to channels that match one or more patterns.", "2.0.0", "O(N) where N is the number of patterns to unsubscribe.")
        .acl(&["pubsub", "slow"]),
    CommandSpec::new("ssubscribe", -2, SUB, SHARD_CHANNELS, ssubscribe)
        .doc("pubsub", "Listens for messages published to shard channels.", "7.0.0", "O(N) where N is the number of shard channels to subscribe to.")
        .acl(&["pubsub", "slow"])
        .channels(Channels::All),
    CommandSpec::new("sunsubscribe", -1, SUB, SHARD_CHANNELS, sunsubscribe)
        .doc("pubsub", "Stops listening to messages posted to shard channels.", "7.0.0", "O(N) where N is the number of shard channels to unsubscribe.")
        .acl(&["pubsub", "slow"]),
    CommandSpec::new("publish", 3, PUBSUB | LOADING | STALE | FAST | MAY_REPLICATE, &[], publish)
        .doc(
            "pubsub",
            "Posts a message to a channel.",
            "2.0.0",
            "O(N+M) where N is the number of clients subscribed to the receiving channel and M is the total number of subscribed patterns (by any client).",
        )
        .acl(&["pubsub", "fast"])
        .channels(Channels::First),
    CommandSpec::new("spublish", 3, PUBSUB | LOADING | STALE | FAST | MAY_REPLICATE, SHARD_CHANNEL, spublish)
        .doc("pubsub", "Post a message to a shard channel", "7.0.0", "O(N) where N is the number of clients subscribed to the receiving shard channel.")
        .acl(&["pubsub", "fast"])
        .channels(Channels::First),
    CommandSpec::new("pubsub", -2, 0, &[], super::unknown_subcommand)
        .doc("pubsub", "A container for Pub/Sub commands.", "2.8.0", "Depends on subcommand.")
        .acl(&["slow"])
        .subs(PUBSUB_SUBS),
];

static PUBSUB_SUBS: &[CommandSpec] = &[
    CommandSpec::new("channels", -2, PUBSUB | LOADING | STALE, &[], channels)
        .doc(
            "pubsub",
            "Returns the active channels.",
            "2.8.0",
            "O(N) where N is the number of active channels, and assuming constant time pattern matching (relatively short channels and patterns)",
        )
        .acl(&["pubsub", "slow"]),
    CommandSpec::new("numsub", -2, PUBSUB | LOADING | STALE, &[], numsub)
        .doc("pubsub", "Returns a count of subscribers to channels.", "2.8.0", "O(N) for the NUMSUB subcommand, where N is the number of requested channels")
        .acl(&["pubsub", "slow"]),
    CommandSpec::new("numpat", 2, PUBSUB | LOADING | STALE, &[], numpat)
        .doc("pubsub", "Returns a count of unique pattern subscriptions.", "2.8.0", "O(1)")
        .acl(&["pubsub", "slow"]),
    CommandSpec::new("shardchannels", -2, PUBSUB | LOADING | STALE, &[], shardchannels)
        .doc(
            "pubsub",
            "Returns the active shard channels.",
            "7.0.0",
            "O(N) where N is the number of active shard channels, and assuming constant time pattern matching (relatively short shard channels).",
        )
        .acl(&["pubsub", "slow"]),
    CommandSpec::new("shardnumsub", -2, PUBSUB | LOADING | STALE, &[], shardnumsub)
        .doc(
            "pubsub",
            "Returns the count of subscribers of shard channels.",
            "7.0.0",
            "O(N) for the SHARDNUMSUB subcommand, where N is the number of requested shard channels",
        )
        .acl(&["pubsub", "slow"]),
    CommandSpec::new("help", 2, LOADING | STALE, &[], help)
        .doc("pubsub", "Returns helpful text about the different subcommands.", "6.2.0", "O(1)")
        .acl(&["slow"]),
];

/// Whether `name` is one of the commands a RESP2 subscriber may still
/// send (Redis's processCommand: the subscribe family, PING, QUIT, RESET).
pub fn allowed_while_subscribed(name: &str) -> bool {
    matches!(name, "subscribe" | "unsubscribe" | "psubscribe" | "punsubscribe" | "ssubscribe" | "sunsubscribe" | "ping" | "quit" | "reset")
}

fn subscribe(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    join(ctx, args, Kind::Channel);
}

fn psubscribe(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    join(ctx, args, Kind::Pattern);
}

fn ssubscribe(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    // EXEC runs its commands as a client that may not block: Redis lets
    // SUBSCRIBE and PSUBSCRIBE through there (they are older), not this.
    if ctx.locks.is_pinned() {
        ctx.reply.error(errors::SSUBSCRIBE_DENY_BLOCKING);
        return;
    }
    join(ctx, args, Kind::Shard);
}

fn unsubscribe(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    leave(ctx, args, Kind::Channel);
}

fn punsubscribe(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    leave(ctx, args, Kind::Pattern);
}

fn sunsubscribe(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    leave(ctx, args, Kind::Shard);
}

/// One (un)subscribe reply: the verb, the name (null: none), the count.
fn confirm(ctx: &mut Ctx<'_, '_>, verb: &[u8], name: Option<&[u8]>, count: usize) {
    ctx.reply.push(3);
    ctx.reply.bulk(verb);
    match name {
        Some(n) => ctx.reply.bulk(n),
        None => ctx.reply.null(),
    }
    ctx.reply.int(count as i64);
}

fn join(ctx: &mut Ctx<'_, '_>, args: Args<'_>, kind: Kind) {
    let mut subs = ctx.client.subs.take().unwrap_or_else(|| Box::new(Subscriptions::new(ctx.client.shared.inbox().clone())));
    let verb = kind.verbs().0;
    for name in args.tail(1).iter() {
        if subs.set(kind).insert(name.into()) {
            ctx.srv.messaging.pubsub.subscribe(kind, name, &subs.inbox);
        }
        confirm(ctx, verb, Some(name), subs.count(kind));
    }
    ctx.client.note_subscriptions(Some(&subs));
    ctx.client.subs = Some(subs);
    ctx.srv.refresh_notify();
}

fn leave(ctx: &mut Ctx<'_, '_>, args: Args<'_>, kind: Kind) {
    let verb = kind.verbs().1;
    let Some(mut subs) = ctx.client.subs.take() else {
        if args.len() == 1 {
            confirm(ctx, verb, None, 0);
        }
        for name in args.tail(1).iter() {
            confirm(ctx, verb, Some(name), 0);
        }
        return;
    };
    // Out of the directory first, so that nothing more arrives for what
    // is left; then what did arrive goes ahead of the replies.
    let names: Vec<Box<[u8]>> = if args.len() == 1 { subs.set(kind).iter().cloned().collect() } else { args.tail(1).iter().map(Into::into).collect() };
    let mut left = Vec::with_capacity(names.len());
    for name in names {
        if subs.set(kind).remove(&name) {
            ctx.srv.messaging.pubsub.unsubscribe(kind, &name, &subs.inbox);
        }
        left.push((name, subs.count(kind)));
    }
    // What arrived while subscribed goes ahead of the replies, as Redis
    // wrote it when it was published (to the client as it still is).
    ctx.client.subs = Some(subs);
    super::drain_own(ctx.client, &mut ctx.reply, ctx.locks);
    let Some(subs) = ctx.client.subs.take() else { return };
    if left.is_empty() {
        confirm(ctx, verb, None, subs.count(kind));
    }
    for (name, count) in &left {
        confirm(ctx, verb, Some(name), *count);
    }
    ctx.client.note_subscriptions(Some(&subs));
    if subs.total() > 0 {
        ctx.client.subs = Some(subs);
    }
    ctx.srv.refresh_notify();
}

fn publish(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    send(ctx, args, false);
}

fn spublish(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    send(ctx, args, true);
}

fn send(ctx: &mut Ctx<'_, '_>, args: Args<'_>, shard: bool) {
    let srv = ctx.srv;
    // A message to this client itself follows this reply (dispatch).
    let n = srv.messaging.publish(args.get(1), args.get(2), shard, ctx.worker, |w| srv.wake_only(w));
    // Cluster mode: the other nodes' subscribers get it over the bus.
    if let Some(cl) = srv.cluster.get() {
        cl.publish(args.get(1), args.get(2), shard);
    }
    ctx.reply.int(n as i64);
}

fn channels(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    list(ctx, args, false);
}

fn shardchannels(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    list(ctx, args, true);
}

fn list(ctx: &mut Ctx<'_, '_>, args: Args<'_>, shard: bool) {
    if args.len() > 3 {
        ctx.reply.error(errors::subcommand_syntax(args.get(1), "pubsub"));
        return;
    }
    let names = ctx.srv.messaging.pubsub.channel_names(args.try_get(2), shard);
    ctx.reply.array(names.len());
    for n in &names {
        ctx.reply.bulk(n);
    }
}

fn numsub(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    count(ctx, args, false);
}

fn shardnumsub(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    count(ctx, args, true);
}

fn count(ctx: &mut Ctx<'_, '_>, args: Args<'_>, shard: bool) {
    ctx.reply.array((args.len() - 2) * 2);
    for ch in args.tail(2).iter() {
        ctx.reply.bulk(ch);
        ctx.reply.int(ctx.srv.messaging.pubsub.subscribers(ch, shard) as i64);
    }
}

fn numpat(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    ctx.reply.int(ctx.srv.messaging.pubsub.counts().1 as i64);
}

fn help(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    super::help_lines(
        ctx,
        &[
            "CHANNELS [<pattern>]",
            "    Return the currently active channels matching a <pattern> (default: '*').",
            "NUMPAT",
            "    Return number of subscriptions to patterns.",
            "NUMSUB [<channel> ...]",
            "    Return the number of subscribers for the specified channels, excluding",
            "    pattern subscriptions(default: no channels).",
            "SHARDCHANNELS [<pattern>]",
            "    Return the currently active shard level channels matching a <pattern> (default: '*').",
            "SHARDNUMSUB [<shardchannel> ...]",
            "    Return the number of subscribers for the specified shard level channel(s)",
        ],
    );
}
