// A real `hensuc serve` for the tests: SQLite in a temp dir, stub agents, JWT tenants. HENSUC
// names the binary (clients/test.sh sets it). The HS256 secret is random per run and only in
// the server's environment; the server listens on 127.0.0.1 only.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createHmac, randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { HensuClient } from "../src/index.js";

const fixtures = resolve(fileURLToPath(new URL(".", import.meta.url)), "../../../fixtures");

export interface TestServer {
  url: string;
  definitions: Record<string, Record<string, unknown>>;
  token(tenant: string): string;
  /** A client of a fresh tenant with the test workflows pushed (isolated lists). */
  newTenant(tenant?: string): Promise<HensuClient>;
  stop(): Promise<void>;
}

const b64url = (data: string | Buffer) => Buffer.from(data).toString("base64url");

export function mintToken(secret: string, claims: Record<string, unknown>): string {
  const head = b64url(JSON.stringify({ alg: "HS256", typ: "JWT" }));
  const body = b64url(JSON.stringify(claims));
  const signature = createHmac("sha256", secret).update(`${head}.${body}`).digest("base64url");
  return `${head}.${body}.${signature}`;
}

export async function startServer(): Promise<TestServer> {
  const binary = process.env.HENSUC;
  if (!binary) throw new Error("set HENSUC to a hensuc binary (clients/test.sh does)");
  const dir = mkdtempSync(join(tmpdir(), "hensu-ts-"));
  const secret = randomBytes(48).toString("base64url");
  const child: ChildProcess = spawn(
    resolve(binary),
    ["serve", "--listen", "127.0.0.1:0", "--stub", "--store", join(dir, "state.db"), "-d", dir],
    { env: { ...process.env, HENSU_JWT_SECRET: secret }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let log = "";
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`hensuc serve did not start:\n${log}`)), 15_000);
    const onData = (chunk: Buffer) => {
      log += chunk.toString();
      const found = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(log);
      if (found) {
        clearTimeout(timer);
        resolveUrl(found[1]!);
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.on("exit", () => reject(new Error(`hensuc serve exited:\n${log}`)));
  });
  const definitions: Record<string, Record<string, unknown>> = {};
  for (const name of ["client-review", "client-quick"]) {
    const text = execFileSync(resolve(binary), ["build", join(fixtures, "workflows", `${name}.hwf`), "-d", fixtures, "-o", "-"], {
      encoding: "utf8",
    });
    const definition = JSON.parse(text) as Record<string, unknown>;
    definitions[definition.id as string] = definition;
  }
  const token = (tenant: string) =>
    mintToken(secret, { sub: "client-tests", tenant_id: tenant, exp: Math.floor(Date.now() / 1000) + 3600 });
  return {
    url,
    definitions,
    token,
    async newTenant(tenant = `ts-${randomUUID().slice(0, 12)}`) {
      const client = new HensuClient({ baseUrl: url, token: token(tenant) });
      for (const definition of Object.values(definitions)) await client.pushWorkflow(definition);
      return client;
    },
    async stop() {
      const exited = new Promise((done) => child.once("exit", done));
      child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

