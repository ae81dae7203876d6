//! `cuth serve`: every request of the protocol through the binary, error
//! replies that leave the session as it was, fuzzed lines, and the TCP
//! socket with a client that goes away.

use crate::util::cli::cuth_path;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

const STACK: &str = "configs/3dice_two_dies.toml";

struct Server {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Server {
    fn start(extra: &[&str]) -> (Server, Value) {
        let mut child = Command::new(cuth_path())
            .args(["serve", STACK, "--grid", "12x12", "--device", "cpu"])
            .args(extra)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("cuth serve starts");
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        let mut s = Server {
            child,
            input,
            output,
        };
        let hello = s.read();
        (s, hello)
    }

    fn read(&mut self) -> Value {
        let mut line = String::new();
        self.output.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    }

    /// Sends one raw line, returns its reply.
    fn line(&mut self, text: &str) -> Value {
        writeln!(self.input, "{text}").unwrap();
        self.input.flush().unwrap();
        self.read()
    }

    fn ask(&mut self, req: Value) -> Value {
        let r = self.line(&req.to_string());
        assert_eq!(r["ok"], true, "{req} -> {r}");
        r
    }

    fn refused(&mut self, req: &str, field: &str) -> Value {
        let r = self.line(req);
        assert_eq!(r["ok"], false, "{req} -> {r}");
        assert_eq!(r["field"], field, "{req} -> {r}");
        assert!(r["error"].as_str().is_some_and(|e| !e.is_empty()));
        r
    }

    fn quit(mut self) {
        let r = self.ask(json!({"op": "quit"}));
        assert_eq!(r["op"], "quit");
        assert!(self.child.wait().unwrap().success());
    }
}

/// The same blocks, their maxima within 1e-9 K.
fn assert_close(a: &[(String, f64)], b: &[(String, f64)]) {
    assert_eq!(a.len(), b.len());
    for ((na, ta), (nb, tb)) in a.iter().zip(b) {
        assert_eq!(na, nb);
        assert!((ta - tb).abs() < 1e-9, "{na}: {ta} vs {tb}");
    }
}

/// The block maxima, by `layer.block`.
fn maxima(r: &Value) -> Vec<(String, f64)> {
    (r["blocks"].as_array().unwrap().iter())
        .map(|b| {
            let name = format!(
                "{}.{}",
                b["layer"].as_str().unwrap(),
                b["block"].as_str().unwrap()
            );
            (name, b["max_k"].as_f64().unwrap())
        })
        .collect()
}

#[test]
fn every_request_is_answered() {
    let (mut s, hello) = Server::start(&[]);
    assert_eq!(hello["protocol"], 1);
    assert_eq!(hello["device"], "cpu");
    let info = s.ask(json!({"op": "info", "id": "a"}));
    assert_eq!(info["id"], "a");
    assert_eq!(info["info"]["nx"], 12);
    let layers = info["info"]["layers"].as_array().unwrap().clone();
    let die = layers.iter().find(|l| l["drivable"] == true).unwrap()["name"]
        .as_str()
        .unwrap()
        .to_string();

    let r = s.ask(json!({"op": "set_power", "blocks": {"Core0": 4.0, "Bank1": 0.0}}));
    // 3 + 2 + 1 + 0.5 + 0.5 W in the stack file; Core0 3 -> 4, Bank1 0.5 -> 0.
    assert!((r["power_w"].as_f64().unwrap() - 7.5).abs() < 1e-9, "{r}");
    let r = s.ask(json!({"op": "step", "dt": 0.01, "steps": 4}));
    assert_eq!(r["steps"], 4);
    assert!((r["time_s"].as_f64().unwrap() - 0.04).abs() < 1e-12);
    assert_eq!(r["solver"]["dt_s"], 0.01);
    let blocks = s.ask(json!({"op": "blocks"}));
    let b = maxima(&blocks);
    assert_eq!(b.len(), 5);
    assert!(b.iter().all(|(_, t)| *t > 300.0));
    let hottest = s.ask(json!({"op": "hottest"}))["hottest"]["t_k"]
        .as_f64()
        .unwrap();
    assert!(b.iter().all(|(_, t)| *t <= hottest));
    let probes = s.ask(json!({"op": "probes"}));
    assert_eq!(probes["probes"].as_array().unwrap().len(), 1);

    let dir = tempfile::tempdir().unwrap();
    let map = dir.path().join("die.csv");
    s.ask(json!({"op": "map", "layer": die, "path": map}));
    let text = std::fs::read_to_string(&map).unwrap();
    assert_eq!(text.lines().next(), Some("# unit: K"));
    let rows: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(rows.len(), 12);
    assert!(rows.iter().all(|r| r.split(',').count() == 12));

    // Save in memory and to a file; step on; restore either and step again:
    // the same field both times, to the solver's tolerance (a step starts
    // from the extrapolation of the last two levels, a restored state from
    // its own level).
    s.ask(json!({"op": "save", "name": "t4"}));
    let state = dir.path().join("t4.state");
    s.ask(json!({"op": "save", "path": state}));
    s.ask(json!({"op": "step", "dt": 0.01}));
    let after = maxima(&s.ask(json!({"op": "blocks"})));
    s.ask(json!({"op": "restore", "name": "t4"}));
    assert!((s.ask(json!({"op": "blocks"}))["time_s"].as_f64().unwrap() - 0.04).abs() < 1e-12);
    assert_eq!(maxima(&s.ask(json!({"op": "blocks"}))), b);
    s.ask(json!({"op": "step", "dt": 0.01}));
    assert_close(&maxima(&s.ask(json!({"op": "blocks"}))), &after);
    s.ask(json!({"op": "restore", "path": state, "time_s": 0.04}));
    s.ask(json!({"op": "step", "dt": 0.01}));
    assert_close(&maxima(&s.ask(json!({"op": "blocks"}))), &after);

    // A layer's map whole, and a raster file; then steady.
    let plane = vec![0.01; 144];
    let r = s.ask(json!({"op": "set_power", "layer": die, "map": plane}));
    assert!(r["power_w"].as_f64().unwrap() > 1.44 - 1e-9);
    let raster = dir.path().join("p.csv");
    std::fs::write(&raster, "1,1\n1,3\n").unwrap();
    s.ask(json!({"op": "set_power", "layer": die, "raster": raster, "total": 2.0}));
    let r = s.ask(json!({"op": "steady"}));
    assert_eq!(r["solver"]["dt_s"], Value::Null);
    assert!(r["solver"]["iterations"].as_u64().unwrap() > 0);
    s.quit();
}

#[test]
fn refused_requests_change_nothing() {
    let (mut s, _) = Server::start(&[]);
    s.ask(json!({"op": "step", "dt": 0.02}));
    let before = s.ask(json!({"op": "blocks"}));
    s.refused("not json", "request");
    s.refused("{\"op\": \"fly\"}", "request");
    s.refused("{\"op\": \"step\"}", "request");
    s.refused("{\"op\": \"step\", \"dt\": 0.01, \"extra\": 1}", "request");
    s.refused("{\"op\": \"step\", \"dt\": -1}", "dt");
    s.refused("{\"op\": \"step\", \"dt\": 1e300}", "dt");
    s.refused("{\"op\": \"step\", \"dt\": 0.01, \"steps\": 0}", "steps");
    s.refused(
        "{\"op\": \"set_power\", \"blocks\": {\"Core0\": 1, \"nope\": 2}}",
        "block `nope`",
    );
    s.refused(
        "{\"op\": \"set_power\", \"blocks\": {\"Core0\": -1}}",
        "block `Core0`",
    );
    s.refused(
        "{\"op\": \"set_power\", \"blocks\": {\"Core0\": NaN}}",
        "request",
    );
    s.refused("{\"op\": \"set_power\"}", "set_power");
    s.refused("{\"op\": \"restore\", \"name\": \"never\"}", "name");
    s.refused(
        "{\"op\": \"restore\", \"path\": \"/nonexistent/x\"}",
        "path",
    );
    s.refused(
        "{\"op\": \"map\", \"layer\": \"nope\", \"path\": \"/tmp/x\"}",
        "layer `nope`",
    );
    let after = s.ask(json!({"op": "blocks"}));
    assert_eq!(before["blocks"], after["blocks"]);
    assert_eq!(before["time_s"], after["time_s"]);
    s.quit();
}

/// Deterministic garbage: truncated and mutated requests, binary bytes.
#[test]
fn fuzzed_lines_never_end_the_session() {
    let (mut s, _) = Server::start(&[]);
    let (mut twin, _) = Server::start(&[]);
    let good = [
        r#"{"op":"set_power","blocks":{"Core0":2.5}}"#,
        r#"{"op":"step","dt":0.01}"#,
        r#"{"op":"blocks"}"#,
    ];
    let mut rng = crate::util::Rng::new(7);
    for round in 0..60 {
        let base = good[round % good.len()].as_bytes();
        let mut bytes = base.to_vec();
        match rng.next_u64() % 4 {
            0 => bytes.truncate((rng.next_u64() as usize) % base.len()),
            1 => {
                let i = (rng.next_u64() as usize) % bytes.len();
                bytes[i] = (rng.next_u64() % 256) as u8;
            }
            2 => bytes = (0..40).map(|_| (rng.next_u64() % 256) as u8).collect(),
            _ => bytes
                .splice(0..0, b"{\"op\":\"step\",\"dt\":1e-300}".iter().copied())
                .for_each(drop),
        }
        bytes.retain(|&b| b != b'\n');
        s.input.write_all(&bytes).unwrap();
        s.input.write_all(b"\n").unwrap();
        s.input.flush().unwrap();
        if bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let r = s.read();
        assert!(r["ok"].is_boolean(), "{r}");
    }
    // Whatever the garbage did that was valid, both sessions agree once
    // given the same power.
    for srv in [&mut s, &mut twin] {
        srv.ask(json!({"op": "set_power", "blocks": {"Core0": 3.0, "Core1": 2.0, "Cache": 1.0, "Bank0": 0.5, "Bank1": 0.5}}));
        srv.ask(json!({"op": "steady"}));
    }
    assert_eq!(
        s.ask(json!({"op": "blocks"}))["blocks"],
        twin.ask(json!({"op": "blocks"}))["blocks"]
    );
    s.quit();
    twin.quit();
}

#[test]
fn tcp_clients_take_turns_and_a_lost_one_does_no_harm() {
    let mut child = Command::new(cuth_path())
        .args([
            "serve",
            STACK,
            "--grid",
            "12x12",
            "--device",
            "cpu",
            "--listen",
            "127.0.0.1:0",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let addr = line
        .trim()
        .strip_prefix("cuth: listening on ")
        .unwrap()
        .to_string();
    let talk = |reqs: &[Value], read_all: bool| -> Vec<Value> {
        let conn = std::net::TcpStream::connect(&addr).unwrap();
        let mut rd = BufReader::new(conn.try_clone().unwrap());
        let mut w = conn;
        let mut hello = String::new();
        rd.read_line(&mut hello).unwrap();
        let mut out = Vec::new();
        for r in reqs {
            writeln!(w, "{r}").unwrap();
            if read_all {
                let mut l = String::new();
                rd.read_line(&mut l).unwrap();
                out.push(serde_json::from_str(&l).unwrap());
            }
        }
        out
    };
    // A client that asks for a long run and leaves without reading.
    talk(
        &[
            json!({"op": "step", "dt": 0.01, "steps": 5}),
            json!({"op": "blocks"}),
        ],
        false,
    );
    let r = talk(&[json!({"op": "blocks"}), json!({"op": "quit"})], true);
    assert_eq!(r[0]["ok"], true, "{}", r[0]);
    // The first client's steps happened: the session carries over.
    assert!(
        (r[0]["time_s"].as_f64().unwrap() - 0.05).abs() < 1e-12,
        "{}",
        r[0]
    );
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_temperature_dependent_stack_is_refused_at_start() {
    let o = crate::util::cli::cuth(&[
        "serve",
        "configs/mol_f2f_kt.toml",
        "--grid",
        "8x8",
        "--device",
        "cpu",
    ]);
    crate::util::cli::fails_with(&o, 2, &["mol_f2f_kt.toml", "temperature-dependent"]);
    assert!(o.stdout.is_empty(), "no greeting before a refusal");
}

#[test]
fn bad_solver_flags_are_refused_at_start() {
    for (flag, value) in [("--max-iter", "0"), ("--rtol", "2")] {
        let o = crate::util::cli::cuth(&["serve", STACK, "--device", "cpu", flag, value]);
        crate::util::cli::fails_with(&o, 2, &[flag]);
    }
}

#[test]
fn a_liquid_cooled_stack_serves_the_steady_field_of_solve() {
    let stack = "configs/liquid_f2f.toml";
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("solve");
    let o = crate::util::cli::cuth(&[
        "solve",
        stack,
        "--grid",
        "201x16",
        "--device",
        "cpu",
        "--json",
        "--no-maps",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut child = Command::new(cuth_path())
        .args(["serve", stack, "--grid", "201x16", "--device", "cpu"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("cuth serve starts");
    let mut input = child.stdin.take().unwrap();
    let requests = ["steady", "hottest", "quit"].map(|op| json!({ "op": op }).to_string());
    writeln!(input, "{}", requests.join("\n")).unwrap();
    drop(input);
    let replies: Vec<Value> = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    assert!(child.wait().unwrap().success());
    assert!(replies.iter().all(|r| r["ok"] != false), "{replies:?}");
    let hottest = &replies[2];
    let (got, want) = (&hottest["hottest"]["t_k"], &summary["hottest"]["t_k"]);
    let (got, want) = (got.as_f64().unwrap(), want.as_f64().unwrap());
    assert!((got - want).abs() < 1e-6, "serve {got} K, solve {want} K");
}
