"""Tool: list_hosts() -> the hosts of the (simulated) fleet, as JSON."""
import json

print(json.dumps(["db1", "db2", "web1", "web2", "cache1"]))
