// Stages and packs the npm packages: the launcher (opengist-mcp/) and one package per
// platform binary given. Used by scripts/package-npm and scripts/build-release.
//
//   node packaging/npm/stage.mjs --version 0.1.0 --out DIR [--binary linux-x64=PATH ...]
//
// The version is the workspace version from Cargo.toml (the scripts pass it); the
// launcher's optionalDependencies name every platform of platforms.json at that exact
// version. Prints the path of each tarball it wrote, one a line.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const launcherDir = path.join(here, "opengist-mcp");
const platforms = JSON.parse(fs.readFileSync(path.join(launcherDir, "platforms.json"), "utf8"));

function die(message) {
  process.stderr.write(`stage.mjs: ${message}\n`);
  process.exit(2);
}

const args = process.argv.slice(2);
let version = null;
let out = null;
const binaries = [];
for (let i = 0; i < args.length; i += 2) {
  const [flag, value] = [args[i], args[i + 1]];
  if (value === undefined) die(`${flag} needs a value`);
  if (flag === "--version") version = value;
  else if (flag === "--out") out = path.resolve(value);
  else if (flag === "--binary") {
    const eq = value.indexOf("=");
    if (eq < 1) die(`--binary takes PLATFORM=PATH, got ${value}`);
    binaries.push([value.slice(0, eq), path.resolve(value.slice(eq + 1))]);
  } else die(`unknown argument ${flag}`);
}
if (!version || !/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)) die(`--version must be a semver version, got ${version}`);
if (!out) die("--out DIR is required");

const base = JSON.parse(fs.readFileSync(path.join(launcherDir, "package.json"), "utf8"));
const stage = path.join(out, "stage");
fs.rmSync(stage, { recursive: true, force: true });
fs.mkdirSync(stage, { recursive: true });

function pack(dir) {
  const json = execFileSync("npm", ["pack", "--json", "--pack-destination", out], {
    cwd: dir,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  const [{ filename }] = JSON.parse(json);
  return path.join(out, filename);
}

const written = [];
for (const [key, binary] of binaries) {
  const entry = platforms[key];
  if (!entry) die(`unknown platform ${key}; platforms.json has ${Object.keys(platforms).join(", ")}`);
  if (!fs.statSync(binary, { throwIfNoEntry: false })?.isFile()) die(`no binary at ${binary}`);
  const [os, cpu] = key.split("-");
  const dir = path.join(stage, entry.package);
  fs.mkdirSync(path.join(dir, "bin"), { recursive: true });
  fs.copyFileSync(binary, path.join(dir, "bin", entry.binary));
  fs.chmodSync(path.join(dir, "bin", entry.binary), 0o755);
  const manifest = {
    name: entry.package,
    version,
    description: `The opengist-mcp binary for ${key} (${entry.rustTarget}); installed by the ${base.name} package`,
    license: base.license,
    repository: base.repository,
    os: [os],
    cpu: [cpu],
    files: [`bin/${entry.binary}`],
    preferUnplugged: true,
  };
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify(manifest, null, 2) + "\n");
  fs.writeFileSync(
    path.join(dir, "README.md"),
    `# ${entry.package}\n\nThe \`opengist-mcp\` binary for ${key}. Install \`${base.name}\` instead; it picks this package.\n`,
  );
  written.push(pack(dir));
}

const launcher = path.join(stage, "opengist-mcp");
fs.cpSync(launcherDir, launcher, { recursive: true });
const optionalDependencies = Object.fromEntries(Object.values(platforms).map((e) => [e.package, version]));
fs.writeFileSync(
  path.join(launcher, "package.json"),
  JSON.stringify({ ...base, version, optionalDependencies }, null, 2) + "\n",
);
written.push(pack(launcher));
for (const file of written) console.log(file);
