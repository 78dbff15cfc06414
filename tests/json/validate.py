#!/usr/bin/env python3
"""Validate every command's JSON output against its schema (schemas/*.schema.json).

Usage: validate.py TOPOPLAN SCHEMA_DIR CASES_DIR

Every schema file but common.schema.json describes the document of one
command: schemas/<command>.schema.json, schema name "topoplan.<command>".
A schema lists the command lines to test in "x-topoplan-tests" (default:
`<command> {topo} --nodes {nodes}`), each {"args": [...], "exit": [codes],
"cases_with": FILE, "each": GLOB}. Placeholders:
  {topo}   every distinct public topology (cases/*/topo.xml, one case per content)
  {nodes}  1 and 2
  {other}  another distinct topology (the next one, in case-name order)
  {case}   every case folder holding the file named by "cases_with"
  {each}   every file matching the glob "each" (relative to the repository)
  {builtin} every built-in topology (`topoplan builtins`), with {nodes} as above
A line without placeholders runs once. Every line runs as
`topoplan --no-env --format json ARGS`; its output must be one JSON document
valid against the schema, naming it ("schema") and its version.

Also checked: every schema is strict (every object closes its keys with
additionalProperties or unevaluatedProperties: false, so an undocumented key fails) and
every property has a "description"; every command of `topoplan --help` that accepts --format json
has a schema here (so a new command cannot ship JSON without a contract).
"""
import concurrent.futures
import glob
import hashlib
import json
import os
import re
import subprocess
import sys

import jsonschema

BASE = "https://topoplan.example/schemas/"


def load_schemas(schema_dir):
    store = {}
    for path in sorted(glob.glob(os.path.join(schema_dir, "*.schema.json"))):
        with open(path) as f:
            schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(schema)
        store[os.path.basename(path)[: -len(".schema.json")]] = schema
    return store


def inline_refs(node, schema, store):
    """The schema with every "FILE#/$defs/NAME" or "#/$defs/NAME" reference replaced
    by its definition: validating big documents then costs no reference lookups."""
    if isinstance(node, list):
        return [inline_refs(x, schema, store) for x in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target, _, pointer = node["$ref"].partition("#")
        owner = store[target[: -len(".schema.json")]] if target else schema
        for part in pointer.strip("/").split("/"):
            owner = owner[part]
        rest = {k: v for k, v in node.items() if k != "$ref"}
        resolved = inline_refs(owner, store[target[: -len(".schema.json")]] if target else schema, store)
        return {"allOf": [resolved, inline_refs(rest, schema, store)]} if rest else resolved
    return {k: inline_refs(v, schema, store) for k, v in node.items()}


def undescribed(node, path=""):
    """Keys of a schema's "properties" without a "description" (schemas that declare
    "x-topoplan-described": every key of their documents is explained)."""
    missing = []
    if isinstance(node, dict):
        for key, sub in node.get("properties", {}).items():
            if isinstance(sub, dict) and "description" not in sub:
                missing.append(f"{path}/{key}")
        for key, sub in node.items():
            missing += undescribed(sub, f"{path}/{key}" if key != "properties" else path)
    elif isinstance(node, list):
        for sub in node:
            missing += undescribed(sub, path)
    return missing


def schema_gaps(name, store):
    """What makes a schema loose: a property without a "description", a required key that
    is not a property, an object whose keys
    are listed but that accepts others (no additionalProperties or unevaluatedProperties:
    an undocumented key would pass), an object or array whose content is not described.
    Followed through $ref into common.schema.json; a branch of allOf may leave the closing
    to its parent (unevaluatedProperties: false)."""
    gaps = []

    def resolve(node, owner):
        while isinstance(node, dict) and "$ref" in node:
            target, _, pointer = node["$ref"].partition("#")
            owner = target[: -len(".schema.json")] if target else owner
            node = store[owner]
            for part in pointer.strip("/").split("/"):
                node = node[part]
        return node, owner

    def walk(node, owner, where, branch=False):
        node, owner = resolve(node, owner)
        if not isinstance(node, dict):
            return
        closed = "additionalProperties" in node or "unevaluatedProperties" in node
        if "properties" in node and not closed and not branch:
            gaps.append(f"{where}: lists its keys but accepts others (additionalProperties: false)")
        if node.get("type") == "object" and "properties" not in node and not closed:
            gaps.append(f"{where}: an object without properties or additionalProperties")
        if node.get("type") == "array" and "items" not in node:
            gaps.append(f"{where}: an array without items")
        if "properties" in node:
            for key in node.get("required", []):
                if key not in node["properties"]:
                    gaps.append(f"{where}/{key}: required but not among the properties")
        for key, prop in node.get("properties", {}).items():
            target, _ = resolve(prop, owner)
            if "description" not in prop and "description" not in target:
                gaps.append(f"{where}/{key}: no description")
            walk(prop, owner, f"{where}/{key}")
        if isinstance(node.get("additionalProperties"), dict):
            walk(node["additionalProperties"], owner, f"{where}/*")
        if isinstance(node.get("items"), dict):
            walk(node["items"], owner, f"{where}[]")
        for combiner in ("allOf", "anyOf", "oneOf"):
            for sub in node.get(combiner, []):
                walk(sub, owner, where, branch=combiner == "allOf" and ("unevaluatedProperties" in node or branch))

    walk(store[name], name, name)
    return gaps


# Names that are a list in one place and a count in another, known and documented
# (docs/json.md): plan's "channels" object counts channels by kind ("nvls", "p2p"),
# while nics lists a rank's "channels", "nvls" and "p2p" uses; tune counts "channels".
LIST_AND_COUNT = {"channels", "nvls", "p2p"}


def list_count_clashes(store):
    """A property name that is an array (a list) somewhere and an integer (a count)
    elsewhere: the same name must mean the same thing in every document."""
    kinds = {}

    def walk(node, where):
        if isinstance(node, dict):
            for key, prop in node.get("properties", {}).items():
                kind = prop.get("type") if isinstance(prop, dict) else None
                if kind in ("array", "integer"):
                    kinds.setdefault(key, {}).setdefault(kind, where + "/" + key)
            for value in node.values():
                walk(value, where)
        elif isinstance(node, list):
            for value in node:
                walk(value, where)

    for name, schema in store.items():
        walk(schema, name)
    return [f"{key}: a list at {seen['array']}, a count at {seen['integer']} (name counts n_{key})"
            for key, seen in sorted(kinds.items()) if len(seen) == 2 and key not in LIST_AND_COUNT]


def check_schema_gaps_itself():
    """schema_gaps finds each kind of looseness (so the check above cannot pass vacuously)."""
    loose = {"type": "object", "required": ["a", "c"], "properties": {
        "a": {"type": "integer"},
        "b": {"description": "b", "type": "object", "properties": {"x": {"description": "x"}}},
        "d": {"description": "d", "type": "array"}}}
    found = schema_gaps("t", {"t": loose})
    wanted = ["t: lists its keys", "t/a: no description", "t/c: required but not",
              "t/b: lists its keys", "t/d: an array without items"]
    missed = [w for w in wanted if not any(f.startswith(w) for f in found)]
    return [f"schema_gaps misses: {m}" for m in missed]


def make_validator(schema, store):
    flat = inline_refs(schema, schema, store)
    flat.pop("$defs", None)
    return jsonschema.Draft202012Validator(flat)


def distinct_topologies(cases_dir):
    seen, topos = set(), []
    for path in sorted(glob.glob(os.path.join(cases_dir, "*", "topo.xml"))):
        with open(path, "rb") as f:
            digest = hashlib.sha1(f.read()).hexdigest()
        if digest not in seen:
            seen.add(digest)
            topos.append(path)
    return topos


def builtin_names(binary):
    out = subprocess.run([binary, "builtins"], capture_output=True, text=True, check=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def expand(test, topos, cases_dir, builtins=()):
    """All argument lists of one test line."""
    args = test["args"]
    text = " ".join(args)
    if "{builtin}" in text:
        node_counts = [1, 2] if "{nodes}" in text else [None]
        return [[a.replace("{builtin}", b).replace("{nodes}", str(n)) for a in args] for b in builtins for n in node_counts]
    if "{each}" in text:
        return [[a.replace("{each}", f) for a in args] for f in sorted(glob.glob(test["each"]))]
    if "{case}" in text:
        want = test.get("cases_with", "topo.xml")
        dirs = sorted(d for d in glob.glob(os.path.join(cases_dir, "*")) if os.path.exists(os.path.join(d, want)))
        return [[a.replace("{case}", d) for a in args] for d in dirs]
    if "{topo}" not in text:
        return [list(args)]
    node_counts = [1, 2] if "{nodes}" in text else [None]
    runs = []
    for i, topo in enumerate(topos):
        other = topos[(i + 1) % len(topos)]
        for n in node_counts:
            runs.append([a.replace("{topo}", topo).replace("{other}", other).replace("{nodes}", str(n)) for a in args])
    return runs


def run(binary, args):
    p = subprocess.run([binary, "--no-env", "--format", "json"] + args, capture_output=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def json_commands(binary):
    """Commands listed by --help that accept --format json."""
    out = subprocess.run([binary, "--help"], capture_output=True, text=True).stdout
    names = re.findall(r"^  ([a-z][a-z0-9-]*) ", out.split("Commands:", 1)[1], re.M)
    return [n for n in names if subprocess.run([binary, "--format", "json", n, "--help"], capture_output=True).returncode == 0]


def main():
    binary, schema_dir, cases_dir = sys.argv[1:4]
    store = load_schemas(schema_dir)
    topos = distinct_topologies(cases_dir)
    builtins = builtin_names(binary)
    failures = []
    commands = json_commands(binary)
    missing = [c for c in commands if c not in store]
    # a schema that is not a command's (fleet-check: check with several nodes) must say how to run it
    for name, schema in store.items():
        if name != "common" and name not in commands and "x-topoplan-tests" not in schema:
            failures.append(f"{name}: schema of no command and no x-topoplan-tests")
    for c in missing:
        failures.append(f"{c}: writes JSON but has no schemas/{c}.schema.json")
    for name, schema in store.items():
        if schema.get("x-topoplan-described"):
            failures += [f"{name}: key {k} has no description" for k in undescribed(schema)]
    failures += check_schema_gaps_itself()
    failures += [f"schema names: {c}" for c in list_count_clashes(store)]
    for name in store:
        if name != "common":
            failures += [f"schema {gap}" for gap in schema_gaps(name, store)]
    jobs = []
    lines = {name: schema.get("x-topoplan-json-lines", False) for name, schema in store.items()}
    for name, schema in store.items():
        if name == "common":
            continue
        tests = schema.get("x-topoplan-tests", [{"args": [name, "{topo}", "--nodes", "{nodes}"]}])
        validator = make_validator(schema, store)
        for test in tests:
            for args in expand(test, topos, cases_dir, builtins):
                jobs.append((name, validator, args, test.get("exit", [0])))
    counts = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = pool.map(lambda j: run(binary, j[2]), jobs)
        for (name, validator, args, exits), (code, out, err) in zip(jobs, results):
            where = f"{name}: topoplan --format json {' '.join(args)}"
            if code not in exits:
                failures.append(f"{where}: exit {code}, expected {exits}: {err.decode(errors='replace').strip()[:300]}")
                continue
            if code != 0 and not out.strip():
                continue  # an accepted failure that writes no document (the error is on stderr)
            try:  # "x-topoplan-json-lines": one document per line (fleet check)
                docs = [json.loads(l) for l in out.splitlines() if l.strip()] if lines[name] else [json.loads(out)]
            except ValueError as e:
                failures.append(f"{where}: not JSON ({e})")
                continue
            errors = sorted((e for doc in docs for e in validator.iter_errors(doc)), key=lambda e: list(e.path))
            for e in errors[:3]:
                failures.append(f"{where}: at /{'/'.join(map(str, e.path))}: {e.message[:200]}")
            counts[name] = counts.get(name, 0) + (0 if errors else 1)
    for f in failures[:40]:
        print("FAIL", f)
    summary = ", ".join(f"{n} {c}" for n, c in sorted(counts.items()))
    print(f"json schemas: {sum(counts.values())} documents valid ({summary}); {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
