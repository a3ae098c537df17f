//! memtier_benchmark's command line, and the redis-benchmarks-specification
//! YAML that carries it.
//!
//! Options are accepted in every spelling the specs use: `--opt value`,
//! `--opt=value`, `-c 50`, and the quoted forms (`"--data-size" "10"`) that
//! appear once a spec's argument string is split like a shell would.

use crate::keys::Pattern;
use crate::template::Template;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    Redis,
    Resp3,
    MemcacheText,
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
            data_size: 32,
            random_data: false,
            commands: Vec::new(),
            distinct_client_seed: false,
            randomize: false,
            seed: 0,
            hide_histogram: false,
            json_out_file: None,
            quiet: false,
        }
    }
}

/// What `--spec` asks for besides the benchmark options themselves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
      --ratio SET:GET (1:10) --key-pattern SET:GET of R|G|S|P (R:R)
      --key-minimum N (0)    --key-maximum N (10000000)  --key-prefix STR (memtier-)
      --key-stddev F         --key-median F
  -d, --data-size N (32)     -R, --random-data
      --command \"CMD __key__ __data__ ...\" (repeatable)
      --command-ratio N      --command-key-pattern R|G|S|P   (apply to the last --command)
      --distinct-client-seed --randomize  --seed N
      --hide-histogram       --json-out-file FILE
      --spec FILE.yml --phase preload|benchmark|info   (options after --spec override it)
  Error replies are counted as errors, never as operations.";

/// Splits a string as a POSIX shell would for the subset the specs use:
/// whitespace separates words, single and double quotes group, backslash
/// escapes inside double quotes and outside quotes.
pub fn shell_split(s: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(ch) => cur.push(ch),
                        None => return Err("unterminated single quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(ch @ ('"' | '\\' | '$' | '`')) => cur.push(ch),
                            Some(ch) => {
                                cur.push('\\');
                                cur.push(ch);
                            }
                            None => return Err("unterminated double quote".into()),
                        },
                        Some(ch) => cur.push(ch),
                        None => return Err("unterminated double quote".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(ch) = chars.next() {
                    cur.push(ch);
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    Ok(out)
}

fn num<T: std::str::FromStr>(opt: &str, v: &str) -> Result<T, String> {
    v.parse().map_err(|_| format!("{opt}: invalid value '{v}'"))
}

fn pattern(opt: &str, v: &str) -> Result<Pattern, String> {
    Pattern::from_letter(v)
        .ok_or_else(|| format!("{opt}: invalid key pattern '{v}' (R, G, S or P)"))
}

/// Options that take no value.
const FLAGS: &[&str] = &[
    "--random-data",
    "-R",
    "--distinct-client-seed",
    "--randomize",
    "--hide-histogram",
    "--quiet",
    "-h",
    "--help",
];

impl Config {
    /// Applies memtier-style arguments on top of `self`.
    pub fn apply(&mut self, args: &[String]) -> Result<(), String> {
        let mut i = 0;
        while i < args.len() {
            let a = args[i].as_str();
            i += 1;
            let (opt, inline) = match a.split_once('=') {
                Some((o, v)) if o.starts_with("--") => (o, Some(v.to_string())),
                _ => (a, None),
            };
            if FLAGS.contains(&opt) {
                match opt {
                    "--random-data" | "-R" => self.random_data = true,
                    "--distinct-client-seed" => self.distinct_client_seed = true,
                    "--randomize" => self.randomize = true,
                    "--hide-histogram" => self.hide_histogram = true,
                    "--quiet" => self.quiet = true,
                    _ => return Err(USAGE.into()),
                }
                continue;
            }
            if !opt.starts_with('-') {
                return Err(format!("unexpected argument '{a}'"));
            }
            let v = match inline {
                Some(v) => v,
                None => {
                    let Some(v) = args.get(i) else {
                        return Err(format!("{opt}: missing value"));
                    };
                    i += 1;
                    v.clone()
                }
            };
            let v = v.as_str();
            match opt {
                "-s" | "--server" | "--host" => self.server = v.to_string(),
                "-p" | "--port" => self.port = num(opt, v)?,
                "-P" | "--protocol" => {
                    self.protocol = match v {
                        "redis" | "resp2" => Protocol::Redis,
                        "resp3" => Protocol::Resp3,
                        "memcache_text" => Protocol::MemcacheText,
                        "memcache_meta" => Protocol::MemcacheMeta,
                        _ => return Err(format!("{opt}: unknown protocol '{v}'")),
                    }
                }
                "-t" | "--threads" => self.threads = num(opt, v)?,
                "-c" | "--clients" => self.clients = num(opt, v)?,
                "--pipeline" => self.pipeline = num(opt, v)?,
                "--test-time" => {
                    self.test_time = Some(num(opt, v)?);
                }
                "-n" | "--requests" => {
                    self.requests = if v == "allkeys" {
                        Requests::AllKeys
                    } else {
                        Requests::Count(num(opt, v)?)
                    };
                    self.test_time = None;
                }
                "--ratio" => {
                    let (s, g) = v
                        .split_once(':')
                        .ok_or_else(|| format!("{opt}: expected SET:GET"))?;
                    self.ratio = (num(opt, s)?, num(opt, g)?);
                }
                "--key-pattern" => {
                    let (s, g) = v
                        .split_once(':')
                        .ok_or_else(|| format!("{opt}: expected SET:GET"))?;
                    self.set_pattern = pattern(opt, s)?;
                    self.get_pattern = pattern(opt, g)?;
                }
                "--key-minimum" => self.key_min = num(opt, v)?,
                "--key-maximum" => self.key_max = num(opt, v)?,
                "--key-prefix" => self.key_prefix = v.to_string(),
                "--key-stddev" => self.key_stddev = Some(num(opt, v)?),
                "--key-median" => self.key_median = Some(num(opt, v)?),
                "-d" | "--data-size" => self.data_size = num(opt, v)?,
                "--command" => {
                    let template = Template::parse(v)?;
                    self.commands.push(Command {
                        template,
                        ratio: 1,
                        pattern: Pattern::Random,
                    });
                }
                "--command-ratio" => {
                    let c = self
                        .commands
                        .last_mut()
                        .ok_or("--command-ratio must follow a --command")?;
                    c.ratio = num(opt, v)?;
                }
                "--command-key-pattern" => {
                    let c = self
                        .commands
                        .last_mut()
                        .ok_or("--command-key-pattern must follow a --command")?;
                    c.pattern = pattern(opt, v)?;
                }
                "--seed" => self.seed = num(opt, v)?,
                "--json-out-file" => self.json_out_file = Some(v.to_string()),
                _ => return Err(format!("unknown option '{opt}'\n{USAGE}")),
            }
        }
        self.validate()
    }

    fn validate(&self) -> Result<(), String> {
        if self.threads == 0 || self.clients == 0 || self.pipeline == 0 {
            return Err("--threads, --clients and --pipeline must be at least 1".into());
        }
        if self.key_max < self.key_min {
            return Err("--key-maximum is below --key-minimum".into());
        }
        if self.commands.is_empty() && self.ratio == (0, 0) {
            return Err("--ratio 0:0 sends nothing".into());
        }
        if self.commands.iter().all(|c| c.ratio == 0) && !self.commands.is_empty() {
            return Err("every --command-ratio is 0".into());
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
