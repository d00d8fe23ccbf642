//! The programs in `sample-scripts/`, run as an agent host would.

use crate::fake::{Order, Tools, run};

#[test]
fn fan_out_filters_logs_from_many_hosts() {
    let tools = Tools::new()
        .tool("get_logs", |args| {
            let args: serde_json::Value = serde_json::from_str(args).unwrap();
            let host = args["host"].as_str().unwrap().to_owned();
            let count = args["count"].as_u64().unwrap();
            let lines: Vec<_> = (0..count)
                .map(|i| serde_json::json!({ "host": host, "level": if i % 3 == 0 { "error" } else { "info" }, "i": i }))
                .collect();
            Ok(serde_json::to_string(&lines).unwrap())
        })
        .order(Order::Lifo);
    let program = include_str!("../../sample-scripts/fan_out.js");
    let run = run(program, &[("get_logs", "get_logs(host, count)")], tools);
    assert_eq!(run.tools.in_flight_at_first_recv, Some(8));
    let value: serde_json::Value = serde_json::from_str(run.value()).unwrap();
    assert_eq!(value["hosts"], 8);
    assert_eq!(value["errors"], 8 * 4);
    assert_eq!(run.console, "fetched 8 hosts\n");
}
