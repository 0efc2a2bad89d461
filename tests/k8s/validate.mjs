// tests/k8s/validate.mjs — validates every object of a kustomize build
// against the Kubernetes OpenAPI schema as packaged by npm's
// kubernetes-models (4.5.1: Kubernetes v1.33.0). Types, required fields and
// enums are checked; unknown fields are not (the package accepts them).
//
//   node validate.mjs NODE_MODULES_DIR OBJECTS.json
//
// OBJECTS.json: a JSON array of objects. Prints one TAP line per object (no
// plan); an object of a kind it has no model for is a failure, not a pass.
import { createRequire } from "module";
import { readFileSync } from "fs";

const [modules, file] = process.argv.slice(2);
const require = createRequire(modules.replace(/\/?$/, "/"));
const objects = JSON.parse(readFileSync(file, "utf8"));
const group = (apiVersion) => (apiVersion.includes("/") ? apiVersion : `v1`);
let n = 0;
for (const o of objects) {
	n++;
	const name = `${o.kind} ${o.metadata && o.metadata.name}`;
	let Model;
	try {
		Model = require(`kubernetes-models/${group(o.apiVersion)}/${o.kind}`)[o.kind];
	} catch (e) {
		console.log(`not ok ${n} - ${name}: no schema for ${o.apiVersion} ${o.kind}`);
		continue;
	}
	try {
		new Model(o).validate();
		console.log(`ok ${n} - ${name} (${o.apiVersion}) validates`);
	} catch (e) {
		console.log(`not ok ${n} - ${name} (${o.apiVersion}) validates`);
		console.log(`# ${e.message}`);
	}
}
