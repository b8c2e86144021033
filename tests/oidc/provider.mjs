// A real OpenID provider (npm oidc-provider) for kube-authn's OIDC tests, started by
// tests/oidc_provider.rs. It serves discovery and JWKS over HTTPS on 127.0.0.1 with the
// certificate it is given, and mints ID tokens with its own IdToken class (signed with the
// provider's own key store, exactly as its token endpoint would).
//
//   node provider.mjs --port N --cert cert.pem --key key.pem --jwks k1.json[,k2.json]
//
// Each JWKS file holds one private JWK; a missing file is created with a fresh RSA-2048 key.
// The first key signs. Prints `LISTENING <port>` once serving. Commands on stdin, one JSON per
// line, answers on stdout one JSON per line:
//   {"cmd":"mint","sub":"jane","claims":{...},"exp":<unix>?}  -> {"token":"..."}
//   {"cmd":"stats"}                                           -> {"discovery":N,"jwks":N}
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { createServer } from 'node:https';
import { createInterface } from 'node:readline';
import Provider from 'oidc-provider';

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);
const port = Number(args.port || 0);
const keys = args.jwks.split(',').map((file) => {
  if (!existsSync(file)) {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const jwk = { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), use: 'sig', alg: 'RS256' };
    writeFileSync(file, JSON.stringify(jwk));
  }
  return JSON.parse(readFileSync(file, 'utf8'));
});

// The issuer must be known before listening: with --port 0 bind first, then build the provider.
const server = createServer({ cert: readFileSync(args.cert), key: readFileSync(args.key) });
server.on('error', (e) => {
  process.stdout.write(`ERROR ${e.code || e}\n`);
  process.exit(1);
});
await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
const actual = server.address().port;
const issuer = `https://127.0.0.1:${actual}`;

const provider = new Provider(issuer, {
  clients: [{
    client_id: 'kube',
    client_secret: 'not-used-by-the-tests',
    redirect_uris: ['https://127.0.0.1/callback'],
    id_token_signed_response_alg: 'RS256',
  }],
  jwks: { keys },
  findAccount: async (ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
  features: { devInteractions: { enabled: false } },
  ttl: { IdToken: 3600 },
});
const counts = { discovery: 0, jwks: 0 };
provider.use(async (ctx, next) => {
  if (ctx.path === '/.well-known/openid-configuration') counts.discovery += 1;
  if (ctx.path === '/jwks') counts.jwks += 1;
  await next();
});
server.on('request', provider.callback());
process.stdout.write(`LISTENING ${actual}\n`);

const client = await provider.Client.find('kube');
const rl = createInterface({ input: process.stdin });
rl.on('line', async (line) => {
  if (!line.trim()) return;
  const req = JSON.parse(line);
  try {
    if (req.cmd === 'mint') {
      const token = new provider.IdToken({ sub: req.sub }, { client });
      token.set('sub', req.sub);
      for (const [k, v] of Object.entries(req.claims || {})) token.set(k, v);
      const jwt = await token.issue({ use: 'idtoken', expiresAt: req.exp });
      process.stdout.write(`${JSON.stringify({ token: jwt })}\n`);
    } else if (req.cmd === 'stats') {
      process.stdout.write(`${JSON.stringify(counts)}\n`);
    } else {
      process.stdout.write(`${JSON.stringify({ error: `unknown command ${req.cmd}` })}\n`);
    }
  } catch (e) {
    process.stdout.write(`${JSON.stringify({ error: String(e) })}\n`);
  }
});
rl.on('close', () => process.exit(0));
