// Writes, as one JSON array on stdout, requests drawn from an OpenAPI 3.0
// document's schemas: for every operation with a JSON body or query
// parameters, some requests json-schema-faker generates as valid, and as
// many with one mutation each (a required field left out, a value of
// another JSON type, null, an unknown field, an extreme string or number).
// The same seed gives the same requests.
//
// Usage: node generate.mjs DOCUMENT SEED PER_OPERATION
import { readFileSync } from "node:fs";
import { generateSync } from "json-schema-faker";

const [docPath, seedArg, perOpArg] = process.argv.slice(2);
const doc = JSON.parse(readFileSync(docPath, "utf8"));
const seed = Number(seedArg ?? 1);
const perOp = Number(perOpArg ?? 10);

// A small seeded generator (mulberry32) for the mutations, so a run repeats.
let state = seed >>> 0;
function random() {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (list) => list[Math.floor(random() * list.length)];

// deref inlines the document's $refs; OpenAPI's nullable becomes a JSON
// Schema type union, which the faker understands.
function deref(schema, depth = 0) {
  if (schema === null || typeof schema !== "object" || depth > 20) return schema;
  if (Array.isArray(schema)) return schema.map((s) => deref(s, depth + 1));
  if (schema.$ref) {
    const path = schema.$ref.replace(/^#\//, "").split("/");
    return deref(path.reduce((o, k) => o[k], doc), depth + 1);
  }
  const out = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === "example" || k === "description") continue;
    out[k] = deref(v, depth + 1);
  }
  if (out.nullable && typeof out.type === "string") out.type = [out.type, "null"];
  delete out.nullable;
  return out;
}

// Leaves of a value as paths, for the mutations to pick from.
function paths(value, prefix = []) {
  if (value === null || typeof value !== "object") return [prefix];
  const out = prefix.length > 0 ? [prefix] : [];
  for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...prefix, Array.isArray(value) ? Number(k) : k]));
  return out;
}

function setAt(value, path, leaf) {
  if (path.length === 0) return leaf;
  const copy = Array.isArray(value) ? [...value] : { ...value };
  copy[path[0]] = setAt(value[path[0]], path.slice(1), leaf);
  return copy;
}

function removeAt(value, path) {
  const parent = path.slice(0, -1).reduce((o, k) => o[k], value);
  const copy = structuredClone(value);
  const target = path.slice(0, -1).reduce((o, k) => o[k], copy);
  if (Array.isArray(parent)) target.splice(path.at(-1), 1);
  else delete target[path.at(-1)];
  return copy;
}

const oddValues = [null, 0, -1, 1.5, 2 ** 53, -(2 ** 63), true, "", " ", "x".repeat(5000), "é\u0000\u202e", [], {}, [null], { "": 1 }];

function mutate(value) {
  const where = paths(value);
  switch (pick(["type", "type", "drop", "unknown", "odd"])) {
    case "drop":
      return where.length > 0 ? removeAt(value, pick(where)) : value;
    case "unknown":
      return typeof value === "object" && value !== null && !Array.isArray(value) ? { ...value, ["x" + Math.floor(random() * 100)]: 1 } : value;
    default:
      return setAt(value, where.length > 0 ? pick(where) : [], pick(oddValues));
  }
}

// mutateQuery changes one thing of a query: an unknown parameter, an odd
// value, a parameter given twice, or a required one left out.
function mutateQuery(values, params) {
  const out = { ...values };
  const name = pick(params).name;
  switch (pick(["unknown", "odd", "twice", "drop"])) {
    case "unknown":
      out["x" + Math.floor(random() * 100)] = ["1"];
      break;
    case "odd":
      out[name] = [String(pick(oddValues.filter((v) => typeof v !== "object")))];
      break;
    case "twice":
      out[name] = [...(out[name] ?? ["1"]), "2"];
      break;
    default:
      delete out[name];
  }
  return out;
}

const requests = [];
for (const [path, item] of Object.entries(doc.paths)) {
  for (const method of ["get", "put", "post", "delete", "patch"]) {
    const op = item[method];
    if (!op) continue;
    const bodySchema = op.requestBody?.content?.["application/json"]?.schema;
    // Query parameters of their own (a deepObject such as the LTI
    // launch's is left out).
    const query = [...(item.parameters ?? []), ...(op.parameters ?? [])]
      .map((p) => (p.$ref ? deref(p) : p))
      .filter((p) => p.in === "query" && deref(p.schema).type !== "object");
    if (!bodySchema && query.length === 0) continue;
    for (let i = 0; i < perOp; i++) {
      const options = { seed: seed * 1000 + requests.length, optionalsProbability: 0.7, maxDefaultItems: 3 };
      const request = { method: method.toUpperCase(), path, operation: op.operationId, mutated: i % 2 === 1 };
      if (bodySchema) {
        const body = generateSync(deref(bodySchema), options);
        request.body = request.mutated ? mutate(body) : body;
      }
      if (query.length > 0) {
        const values = {};
        for (const p of query) {
          if (random() < 0.5 && !p.required) continue;
          const v = generateSync(deref(p.schema), options);
          values[p.name] = (Array.isArray(v) ? v : [v]).map(String);
        }
        request.query = request.mutated && !bodySchema ? mutateQuery(values, query) : values;
      }
      requests.push(request);
    }
  }
}
process.stdout.write(JSON.stringify(requests));
