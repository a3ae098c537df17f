//! memtier_benchmark's command line, and the redis-benchmarks-specification
//! YAML that carries it.
//!
//! Options are accepted in every spelling the specs use: `--opt value`,
//! `--opt=value`, `-c 50`, and the quoted forms (`"--data-size" "10"`) that
//! appear once a spec's argument string is split like a shell would
//! (`shlex`). clap parses one argument list into [`Options`]; a spec's
//! arguments and then the command line's are laid over the defaults in turn,
//! each overriding only what it names, a repeated option the last one winning.
//! Two memtier rules depend on order, so they are replayed from clap's
//! argument indices: `--command-ratio` and `--command-key-pattern` apply to
//! the `--command` before them, and `-n` after `--test-time` cancels it.

use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, ValueEnum};

use crate::keys::Pattern;
use crate::pubsub;
use crate::template::Template;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Protocol {
    #[value(name = "redis", alias = "resp2")]
    Redis,
    #[value(name = "resp3")]
    Resp3,
    #[value(name = "memcache_text")]
    MemcacheText,
    #[value(name = "memcache_meta")]
    MemcacheMeta,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Requests {
    /// Per client.
    Count(u64),
    /// One pass over the key range (split between clients for pattern P).
    AllKeys,
}

#[derive(Clone, Debug)]
pub struct Command {
    pub template: Template,
    pub ratio: u32,
    pub pattern: Pattern,
}

#[derive(Clone, Debug)]
pub struct Config {
    pub server: String,
    pub port: u16,
    pub protocol: Protocol,
    pub threads: usize,
    pub clients: usize,
    pub pipeline: usize,
    /// `--rate-limiting`: requests per second per connection, as memtier
    /// has it (a connection sends at most this many, evenly spaced).
    pub rate_limiting: Option<u64>,
    pub test_time: Option<u64>,
    pub requests: Requests,
    pub ratio: (u32, u32),
    pub set_pattern: Pattern,
    pub get_pattern: Pattern,
    pub key_min: u64,
    pub key_max: u64,
    pub key_prefix: String,
    pub key_stddev: Option<f64>,
    pub key_median: Option<f64>,
    /// The exponent of the `Z` key pattern.
    pub zipf_alpha: f64,
    /// After a GET misses, SET the key it read (a cache filled on demand;
    /// the GETs' hits and misses give the hit ratio).
    pub miss_set: bool,
    pub data_size: usize,
    pub random_data: bool,
    pub commands: Vec<Command>,
    pub distinct_client_seed: bool,
    pub randomize: bool,
    pub seed: u64,
    pub hide_histogram: bool,
    pub json_out_file: Option<String>,
    /// Stop a connection at its first error reply (for debugging specs).
    pub quiet: bool,
    /// `--subscribers`: connections that subscribe before the load starts
    /// and count what they receive (0: none, memtier's behaviour).
    pub subscribers: usize,
    /// `--subscriber-threads`: the threads of their own those connections
    /// run on (the load's threads are not shared with them).
    pub subscriber_threads: usize,
    /// `--subscribe-channels`, expanded: SUBSCRIBE'd, dealt to the
    /// connections round-robin ([`pubsub::deal`]).
    pub sub_channels: Vec<String>,
    /// `--subscribe-patterns`, expanded: PSUBSCRIBE'd, each by one connection.
    pub sub_patterns: Vec<String>,
    /// `--subscribe-shard-channels`, expanded: SSUBSCRIBE'd like channels.
    pub sub_shard_channels: Vec<String>,
    /// `--subscribe-resp3`: subscribers send HELLO 3 and read push messages
    /// (they do with `--protocol resp3` too).
    pub subscribe_resp3: bool,
    /// `--connect-command` (repeatable): commands each load connection
    /// sends once connected, before its load, replies skipped (e.g.
    /// `CLIENT TRACKING ON`); words split on spaces.
    pub connect_commands: Vec<Vec<String>>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            server: "127.0.0.1".into(),
            port: 6379,
            protocol: Protocol::Redis,
            threads: 4,
            clients: 50,
            pipeline: 1,
            rate_limiting: None,
            test_time: None,
            requests: Requests::Count(10_000),
            ratio: (1, 10),
            set_pattern: Pattern::Random,
            get_pattern: Pattern::Random,
            key_min: 0,
            key_max: 10_000_000,
            key_prefix: "memtier-".into(),
            key_stddev: None,
            key_median: None,
            zipf_alpha: 0.99,
            miss_set: false,
            data_size: 32,
            random_data: false,
            commands: Vec::new(),
            distinct_client_seed: false,
            randomize: false,
            seed: 0,
            hide_histogram: false,
            json_out_file: None,
            quiet: false,
            subscribers: 0,
            subscriber_threads: 1,
            sub_channels: Vec::new(),
            sub_patterns: Vec::new(),
            sub_shard_channels: Vec::new(),
            subscribe_resp3: false,
            connect_commands: Vec::new(),
        }
    }
}

/// What `--spec` asks for besides the benchmark options themselves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Phase {
    Preload,
    Benchmark,
    /// Print the spec's name, dataset, key count and arguments as JSON.
    Info,
}

pub const USAGE: &str = "\
usage: tern-bench [options]
  -s, --server HOST          (127.0.0.1)      -p, --port PORT (6379)
  -P, --protocol redis|resp3|memcache_text|memcache_meta
  -t, --threads N (4)        -c, --clients N per thread (50)
      --pipeline N (1)       --test-time SECS | -n, --requests N|allkeys (10000)
      --rate-limiting N      at most N requests per second per connection, evenly spaced
      --ratio SET:GET (1:10) --key-pattern SET:GET of R|G|S|P|Z (R:R)
      --key-minimum N (0)    --key-maximum N (10000000)  --key-prefix STR (memtier-)
      --key-stddev F         --key-median F   --zipf-alpha F (0.99, for Z)
      --miss-set             after a GET misses, SET the key it read (hit ratio)
  -d, --data-size N (32)     -R, --random-data
      --command \"CMD __key__ __data__ ...\" (repeatable)
      --command-ratio N      --command-key-pattern R|G|S|P|Z (apply to the last --command)
      --distinct-client-seed --randomize  --seed N
      --hide-histogram       --json-out-file FILE
      --spec FILE.yml --phase preload|benchmark|info   (options after --spec override it)
  Publish/subscribe (tern-bench's own; the load above is the publisher):
      --subscribers N        N more connections that subscribe before the load starts, count what
                             they receive and its delivery latency (received - __time_us__)
      --subscribe-channels LIST          SUBSCRIBE: names, comma-separated, each with at most one
                             {M..N} range (chan-{0..9999}); dealt round-robin, every subscriber one at least
      --subscribe-patterns LIST          PSUBSCRIBE: each pattern by one subscriber, round-robin
      --subscribe-shard-channels LIST    SSUBSCRIBE, dealt as channels
      --subscribe-resp3      subscribers send HELLO 3 and read RESP3 pushes
      --subscriber-threads N (1)         threads of their own for the subscribers
      __time_us__ in a --command: 16 digits of microseconds since the epoch, then __data__'s filler
                             up to --data-size (PUBLISH chan-__key__ __time_us__)
  Error replies are counted as errors, never as operations.";

/// Splits a string as a POSIX shell would: whitespace separates words,
/// single and double quotes group, backslash escapes.
pub fn shell_split(s: &str) -> Result<Vec<String>, String> {
    shlex::split(s).ok_or_else(|| format!("unterminated quote or escape in: {s}"))
}

fn pair<T>(v: &str, one: fn(&str) -> Result<T, String>) -> Result<(T, T), String> {
    let (a, b) = v.split_once(':').ok_or("expected SET:GET")?;
    Ok((one(a)?, one(b)?))
}

fn ratio(v: &str) -> Result<(u32, u32), String> {
    pair(v, |n| n.parse().map_err(|_| format!("invalid number '{n}'")))
}

fn pattern(v: &str) -> Result<Pattern, String> {
    Pattern::from_letter(v).ok_or_else(|| format!("invalid key pattern '{v}' (R, G, S, P or Z)"))
}

fn patterns(v: &str) -> Result<(Pattern, Pattern), String> {
    pair(v, pattern)
}

/// A `--subscribe-*` list, expanded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Names(Vec<String>);

fn names(v: &str) -> Result<Names, String> {
    pubsub::expand_list(v).map(Names)
}

fn requests(v: &str) -> Result<Requests, String> {
    if v == "allkeys" {
        return Ok(Requests::AllKeys);
    }
    v.parse().map(Requests::Count).map_err(|_| format!("invalid number '{v}' (or allkeys)"))
}

/// One argument list, as memtier_benchmark spells its options. Everything
/// is optional: what is absent leaves the configuration as it was.
#[derive(Parser, Debug)]
#[command(
    name = "tern-bench",
    no_binary_name = true,
    args_override_self = true,
    disable_version_flag = true,
    override_help = USAGE
)]
pub struct Options {
    #[arg(short = 's', long, visible_alias = "host", allow_hyphen_values = true)]
    server: Option<String>,
    #[arg(short = 'p', long)]
    port: Option<u16>,
    #[arg(short = 'P', long)]
    protocol: Option<Protocol>,
    #[arg(short = 't', long)]
    threads: Option<usize>,
    #[arg(short = 'c', long)]
    clients: Option<usize>,
    #[arg(long)]
    pipeline: Option<usize>,
    #[arg(long)]
    rate_limiting: Option<u64>,
    #[arg(long)]
    test_time: Option<u64>,
    #[arg(short = 'n', long, value_parser = requests)]
    requests: Option<Requests>,
    #[arg(long, value_parser = ratio)]
    ratio: Option<(u32, u32)>,
    #[arg(long, value_parser = patterns)]
    key_pattern: Option<(Pattern, Pattern)>,
    #[arg(long = "key-minimum")]
    key_min: Option<u64>,
    #[arg(long = "key-maximum")]
    key_max: Option<u64>,
    #[arg(long, allow_hyphen_values = true)]
    key_prefix: Option<String>,
    #[arg(long, allow_negative_numbers = true)]
    key_stddev: Option<f64>,
    #[arg(long, allow_negative_numbers = true)]
    key_median: Option<f64>,
    #[arg(long, allow_negative_numbers = true)]
    zipf_alpha: Option<f64>,
    #[arg(long)]
    miss_set: bool,
    #[arg(short = 'd', long)]
    data_size: Option<usize>,
    #[arg(short = 'R', long)]
    random_data: bool,
    #[arg(long, allow_hyphen_values = true)]
    command: Vec<String>,
    #[arg(long)]
    command_ratio: Vec<u32>,
    #[arg(long, value_parser = pattern)]
    command_key_pattern: Vec<Pattern>,
    #[arg(long)]
    distinct_client_seed: bool,
    #[arg(long)]
    randomize: bool,
    #[arg(long)]
    seed: Option<u64>,
    #[arg(long)]
    hide_histogram: bool,
    #[arg(long)]
    json_out_file: Option<String>,
    #[arg(long)]
    quiet: bool,
    #[arg(long)]
    subscribers: Option<usize>,
    #[arg(long)]
    subscriber_threads: Option<usize>,
    #[arg(long, value_parser = names, allow_hyphen_values = true)]
    subscribe_channels: Option<Names>,
    #[arg(long, value_parser = names, allow_hyphen_values = true)]
    subscribe_patterns: Option<Names>,
    #[arg(long, value_parser = names, allow_hyphen_values = true)]
    subscribe_shard_channels: Option<Names>,
    #[arg(long)]
    subscribe_resp3: bool,
    #[arg(long, allow_hyphen_values = true)]
    connect_command: Vec<String>,
    /// The spec whose arguments come first (command line only).
    #[arg(long)]
    pub spec: Option<String>,
    #[arg(long)]
    pub phase: Option<Phase>,
    /// The `--command*` options in the order given.
    #[arg(skip)]
    commands: Vec<CommandArg>,
    /// `--test-time` came after the last `-n`.
    #[arg(skip)]
    test_time_last: bool,
}

#[derive(Debug)]
enum CommandArg {
    New(String),
    Ratio(u32),
    Pattern(Pattern),
}

/// The values of option `id` with their positions in the argument list.
fn indexed<T: Clone + Send + Sync + 'static>(m: &ArgMatches, id: &str) -> Vec<(usize, T)> {
    match (m.indices_of(id), m.get_many::<T>(id)) {
        (Some(i), Some(v)) => i.zip(v.cloned()).collect(),
        _ => Vec::new(),
    }
}

impl Options {
    pub fn parse(args: &[String]) -> Result<Options, String> {
        let m = Options::command().try_get_matches_from(args).map_err(|e| match e.kind() {
            clap::error::ErrorKind::DisplayHelp => USAGE.to_string(),
            _ => e.render().to_string().trim_end().to_string(),
        })?;
        let mut o = Options::from_arg_matches(&m).map_err(|e| e.to_string())?;
        let mut cmds: Vec<(usize, CommandArg)> = indexed::<String>(&m, "command")
            .into_iter()
            .map(|(i, c)| (i, CommandArg::New(c)))
            .chain(indexed(&m, "command_ratio").into_iter().map(|(i, r)| (i, CommandArg::Ratio(r))))
            .chain(indexed(&m, "command_key_pattern").into_iter().map(|(i, p)| (i, CommandArg::Pattern(p))))
            .collect();
        cmds.sort_by_key(|&(i, _)| i);
        o.commands = cmds.into_iter().map(|(_, c)| c).collect();
        o.test_time_last = match (m.index_of("test_time"), m.index_of("requests")) {
            (Some(t), Some(n)) => t > n,
            (t, _) => t.is_some(),
        };
        Ok(o)
    }
}

impl Config {
    /// Applies memtier-style arguments on top of `self`.
    pub fn apply(&mut self, args: &[String]) -> Result<(), String> {
        self.apply_options(&Options::parse(args)?)
    }

    /// Lays `o` over `self`: what `o` names replaces what was there.
    pub fn apply_options(&mut self, o: &Options) -> Result<(), String> {
        macro_rules! set {
            ($($field:ident <- $opt:ident),* $(,)?) => {
                $(if let Some(v) = o.$opt.clone() {
                    self.$field = v;
                })*
            };
        }
        set!(
            server <- server, port <- port, protocol <- protocol, threads <- threads,
            clients <- clients, pipeline <- pipeline, ratio <- ratio, key_min <- key_min,
            key_max <- key_max, key_prefix <- key_prefix, data_size <- data_size, seed <- seed,
            subscribers <- subscribers, subscriber_threads <- subscriber_threads,
        );
        for (field, opt) in [
            (&mut self.sub_channels, &o.subscribe_channels),
            (&mut self.sub_patterns, &o.subscribe_patterns),
            (&mut self.sub_shard_channels, &o.subscribe_shard_channels),
        ] {
            if let Some(Names(v)) = opt {
                field.clone_from(v);
            }
        }
        self.subscribe_resp3 |= o.subscribe_resp3;
        for c in &o.connect_command {
            self.connect_commands.push(c.split_whitespace().map(String::from).collect());
        }
        if let Some((s, g)) = o.key_pattern {
            (self.set_pattern, self.get_pattern) = (s, g);
        }
        if let Some(r) = o.requests {
            self.requests = r;
            self.test_time = None;
        }
        if o.test_time_last {
            self.test_time = o.test_time;
        }
        self.key_stddev = o.key_stddev.or(self.key_stddev);
        self.key_median = o.key_median.or(self.key_median);
        self.zipf_alpha = o.zipf_alpha.unwrap_or(self.zipf_alpha);
        self.miss_set |= o.miss_set;
        self.rate_limiting = o.rate_limiting.or(self.rate_limiting);
        self.json_out_file = o.json_out_file.clone().or(self.json_out_file.take());
        self.random_data |= o.random_data;
        self.distinct_client_seed |= o.distinct_client_seed;
        self.randomize |= o.randomize;
        self.hide_histogram |= o.hide_histogram;
        self.quiet |= o.quiet;
        for c in &o.commands {
            match c {
                CommandArg::New(t) => self.commands.push(Command {
                    template: Template::parse(t)?,
                    ratio: 1,
                    pattern: Pattern::Random,
                }),
                CommandArg::Ratio(r) => {
                    self.commands.last_mut().ok_or("--command-ratio must follow a --command")?.ratio = *r;
                }
                CommandArg::Pattern(p) => {
                    self.commands.last_mut().ok_or("--command-key-pattern must follow a --command")?.pattern = *p;
                }
            }
        }
        self.validate()
    }

    fn validate(&self) -> Result<(), String> {
        if self.threads == 0 || self.clients == 0 || self.pipeline == 0 {
            return Err("--threads, --clients and --pipeline must be at least 1".into());
        }
        if self.rate_limiting == Some(0) {
            return Err("--rate-limiting must be at least 1".into());
        }
        if self.key_max < self.key_min {
            return Err("--key-maximum is below --key-minimum".into());
        }
        if !(self.zipf_alpha > 0.0 && self.zipf_alpha.is_finite()) {
            return Err("--zipf-alpha must be a positive number".into());
        }
        if self.commands.is_empty() && self.ratio == (0, 0) {
            return Err("--ratio 0:0 sends nothing".into());
        }
        if self.commands.iter().all(|c| c.ratio == 0) && !self.commands.is_empty() {
            return Err("every --command-ratio is 0".into());
        }
        self.validate_subscribers()
    }

    fn validate_subscribers(&self) -> Result<(), String> {
        let lists = self.sub_channels.len() + self.sub_patterns.len() + self.sub_shard_channels.len();
        if self.subscribers == 0 {
            if lists > 0 || self.subscribe_resp3 {
                return Err("--subscribe-channels, --subscribe-patterns, --subscribe-shard-channels and \
                            --subscribe-resp3 need --subscribers N"
                    .into());
            }
            return Ok(());
        }
        if lists == 0 {
            return Err("--subscribers needs --subscribe-channels, --subscribe-patterns or \
                        --subscribe-shard-channels"
                .into());
        }
        if matches!(self.protocol, Protocol::MemcacheText | Protocol::MemcacheMeta) {
            return Err("--subscribers needs the redis or resp3 protocol".into());
        }
        if self.subscriber_threads == 0 {
            return Err("--subscriber-threads must be at least 1".into());
        }
        Ok(())
    }
}

/// The parts of a redis-benchmarks-specification test spec that tern-bench uses.
#[derive(Debug, serde::Deserialize)]
pub struct Spec {
    pub name: String,
    #[serde(default)]
    pub dbconfig: DbConfig,
    pub clientconfig: ToolConfig,
}

#[derive(Debug, Default, serde::Deserialize)]
pub struct DbConfig {
    pub dataset_name: Option<String>,
    pub check: Option<Check>,
    pub preload_tool: Option<ToolConfig>,
}

#[derive(Debug, serde::Deserialize)]
pub struct Check {
    pub keyspacelen: Option<u64>,
}

#[derive(Debug, serde::Deserialize)]
pub struct ToolConfig {
    pub arguments: String,
}

impl Spec {
    pub fn load(path: &str) -> Result<Spec, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
        serde_yaml::from_str(&text).map_err(|e| format!("{path}: {e}"))
    }

    /// The argument words of a phase; `None` when the spec has no preload.
    pub fn phase_args(&self, phase: Phase) -> Result<Option<Vec<String>>, String> {
        let tool = match phase {
            Phase::Preload => self.dbconfig.preload_tool.as_ref(),
            _ => Some(&self.clientconfig),
        };
        tool.map(|t| shell_split(&t.arguments)).transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        shell_split(s).unwrap()
    }

    #[test]
    fn shell_words() {
        assert_eq!(
            words(r#" "--data-size" "10" --command "MGET __key__ __key__" -c 1"#),
            [
                "--data-size",
                "10",
                "--command",
                "MGET __key__ __key__",
                "-c",
                "1"
            ]
        );
        assert_eq!(
            words(r#"--command-key-pattern="P" 'a b'c"#),
            ["--command-key-pattern=P", "a bc"]
        );
        assert!(shell_split("\"open").is_err());
    }

    #[test]
    fn memtier_options() {
        let mut c = Config::default();
        let a = words(
            "--pipeline 10 --data-size 100 --ratio 0:1 --key-pattern R:P -c 25 -t 4 --test-time 180 \
             --key-minimum=1 --key-maximum 1000000 --distinct-client-seed --hide-histogram",
        );
        c.apply(&a).unwrap();
        assert_eq!(
            (c.pipeline, c.data_size, c.ratio, c.clients, c.threads),
            (10, 100, (0, 1), 25, 4)
        );
        assert_eq!(
            (c.set_pattern, c.get_pattern),
            (Pattern::Random, Pattern::Parallel)
        );
        assert_eq!(
            (c.test_time, c.key_min, c.key_max),
            (Some(180), 1, 1_000_000)
        );
        assert!(c.distinct_client_seed && c.hide_histogram);

        let mut c = Config::default();
        c.apply(&words("--command \"SET __key__ __data__\" --command-ratio 2 --command \"GET __key__\" --command-key-pattern=G -n allkeys")).unwrap();
        assert_eq!(c.commands.len(), 2);
        assert_eq!(
            (c.commands[0].ratio, c.commands[1].pattern),
            (2, Pattern::Gaussian)
        );
        assert_eq!(c.requests, Requests::AllKeys);

        assert!(Config::default().apply(&words("--ratio 1")).is_err());
        assert!(Config::default()
            .apply(&words("--command-ratio 2"))
            .is_err());
        assert!(Config::default().apply(&words("--bogus 1")).is_err());
        assert!(Config::default()
            .apply(&words("--protocol memcache_meta"))
            .is_ok());
    }

    #[test]
    fn later_options_override_and_order_rules_hold() {
        // A spec's arguments, then the command line's over them.
        let mut c = Config::default();
        c.apply(&words("--test-time 180 -c 25 --key-prefix -k- --hide-histogram --seed 4")).unwrap();
        c.apply(&words("-n 1000 --host example -P resp2 -c 3 -c 7 --key-median -5")).unwrap();
        assert_eq!((c.test_time, c.requests, c.clients), (None, Requests::Count(1000), 7));
        assert_eq!((c.server.as_str(), c.protocol, c.key_prefix.as_str()), ("example", Protocol::Redis, "-k-"));
        assert_eq!((c.key_median, c.seed, c.hide_histogram), (Some(-5.0), 4, true));
        // Within one list, -n cancels an earlier --test-time, not a later one.
        let mut c = Config::default();
        c.apply(&words("--test-time 5 -n 10")).unwrap();
        assert_eq!(c.test_time, None);
        c.apply(&words("-n 10 --test-time 5")).unwrap();
        assert_eq!(c.test_time, Some(5));
        // Each --command-ratio goes to the --command before it.
        let mut c = Config::default();
        c.apply(&words("--command A --command B --command-ratio 3 --command-key-pattern S --command C --command-ratio 0")).unwrap();
        let got: Vec<(u32, Pattern)> = c.commands.iter().map(|c| (c.ratio, c.pattern)).collect();
        assert_eq!(got, [(1, Pattern::Random), (3, Pattern::Sequential), (0, Pattern::Random)]);
        assert_eq!(Options::parse(&words("--help")).err().as_deref(), Some(USAGE));
        assert!(Options::parse(&words("--phase later")).is_err());
        assert!(shell_split("trailing \\").is_err());
    }

    #[test]
    fn subscriber_options() {
        let mut c = Config::default();
        c.apply(&words(
            "--subscribers 1000 --subscribe-channels chan-{0..9999} --subscribe-patterns=p{0..9}* \
             --subscribe-shard-channels s1,s2 --subscribe-resp3 --subscriber-threads 2 \
             --command 'PUBLISH chan-__key__ __time_us__'",
        ))
        .unwrap();
        assert_eq!((c.subscribers, c.subscriber_threads, c.subscribe_resp3), (1000, 2, true));
        assert_eq!((c.sub_channels.len(), c.sub_channels[9999].as_str()), (10_000, "chan-9999"));
        assert_eq!((c.sub_patterns.len(), c.sub_patterns[0].as_str()), (10, "p0*"));
        assert_eq!(c.sub_shard_channels, ["s1", "s2"]);
        assert!(c.commands[0].template.timed);
        // A later list replaces an earlier one; absent lists stay.
        c.apply(&words("--subscribe-channels -one-")).unwrap();
        assert_eq!((c.sub_channels.as_slice(), c.sub_patterns.len()), (&["-one-".to_string()][..], 10));
        // Without the options nothing changes: memtier's behaviour.
        assert_eq!(Config::default().subscribers, 0);
        for bad in [
            "--subscribe-channels a",
            "--subscribe-resp3",
            "--subscribers 2",
            "--subscribers 2 --subscribe-channels a,,b",
            "--subscribers 2 --subscribe-channels c{3..1}",
            "--subscribers 2 --subscribe-channels a -P memcache_text",
            "--subscribers 2 --subscribe-patterns a --subscriber-threads 0",
        ] {
            assert!(Config::default().apply(&words(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn connect_commands_are_kept_in_order() {
        let mut c = Config::default();
        c.apply(&words("--connect-command 'CLIENT TRACKING ON' --connect-command 'CLIENT CACHING yes'")).unwrap();
        let got: Vec<String> = c.connect_commands.iter().map(|w| w.join("|")).collect();
        assert_eq!(got, ["CLIENT|TRACKING|ON", "CLIENT|CACHING|yes"]);
    }

    #[test]
    fn every_shared_spec_parses() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/bench/specs");
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "yml") {
                let spec = Spec::load(p.to_str().unwrap()).unwrap();
                for phase in [Phase::Preload, Phase::Benchmark] {
                    if let Some(a) = spec.phase_args(phase).unwrap() {
                        Config::default()
                            .apply(&a)
                            .unwrap_or_else(|e| panic!("{}: {e}", spec.name));
                    }
                }
            }
        }
    }
}
