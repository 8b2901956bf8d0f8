// A real OAuth 2.1 / OpenID authorization server for the end-to-end tests: oidc-provider
// (OpenID Certified, installed pinned by scripts/oidc-env under target/oidc), configured to
// issue JWT access tokens (RFC 9068) for resource servers named by resource indicators
// (RFC 8707) through the client_credentials grant. Loopback only; throwaway keys.
//
//   node server.mjs            environment:
//     OIDC_PORT                the loopback port to listen on (required)
//     OIDC_ISSUER              the issuer (default http://127.0.0.1:<port>)
//     OIDC_RESOURCE            the MCP server's resource (its public URL of /mcp)
//     OIDC_KEYS_FILE           where the signing keys are kept: read when it exists, else
//                              made up and written (two issuers sharing one file sign with the
//                              same keys, so only `iss` tells their tokens apart)
//     OIDC_CIBA_TTL            the lifetime of a CIBA request, seconds (its `expires_in`;
//                              default 600)
//     OIDC_LOGIN_REDIRECT_URI  when set: the approval page's client `approval-page` /
//                              `approval-page-secret` (authorization code with PKCE,
//                              client_secret_basic) with this redirect URI, and the sign-in
//                              pages at /interaction/<uid>: a form (#login, #password,
//                              #submit) where account `<name>` signs in with `<name>-password`
//                              (its ID token's `sub` is `<name>`); consent is given at once
//
// Prints `oidc-provider listening on <issuer>` on stdout once it accepts connections.
//
// Clients (client_secret_post or client_secret_basic): `alice` / `alice-secret`, `bob` /
// `bob-secret`; a client_credentials token's `sub` is the client id. Resource indicators:
//   <OIDC_RESOURCE>              aud = the resource, ES256, 5 minutes
//   urn:e2e:rs256                aud = the resource, RS256
//   urn:e2e:other-audience       aud = http://127.0.0.1:9/other-server
//   urn:e2e:short-lived          aud = the resource, expires after 2 seconds
//   urn:e2e:not-yet-valid        aud = the resource, nbf one hour ahead
//   urn:e2e:hs256-public-key     aud = the resource, HS256 keyed with the issuer's RSA public
//                                key (PEM): the key-confusion attack, signed by the issuer
//
// CIBA (poll mode) with RFC 9396 authorization_details of type `ask_first_approval`, for the
// MCP server's confidential client `mcp-ciba` / `mcp-ciba-secret` (client_secret_basic, the
// CIBA grant only). The users are `alice` and `bob` (a login_hint names one; the subjects of
// the client_credentials tokens above are the same names, so an MCP caller's subject is a
// user here). A CIBA token for the resource is a JWT (aud = the resource) carrying the
// authorization_details the person's device approved. The test plays that device through a
// loopback endpoint of this server (test only):
//   GET  /test/ciba/requests   the open requests: [{auth_req_id, login_hint, binding_message,
//                              authorization_details}], oldest first
//   GET  /test/ciba/received   how many requests each user's device was sent, answered or
//                              not: {login_hint: count} (what the provider received, counted
//                              here, never what the MCP server says)
//   POST /test/ciba/answer     JSON {auth_req_id, action}: `approve` (the details as asked,
//                              or `authorization_details` given instead; `sub` given: the
//                              token's sub is that instead), `deny`, or `expire` (the request
//                              expires now)
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { createPublicKey } from 'node:crypto';

import Provider, { errors } from 'oidc-provider';
import { generateKeyPair, exportJWK } from 'jose';

const port = Number(process.env.OIDC_PORT);
if (!Number.isInteger(port) || port <= 0) {
  console.error('OIDC_PORT must be the port to listen on');
  process.exit(2);
}
const issuer = process.env.OIDC_ISSUER || `http://127.0.0.1:${port}`;
const resource = process.env.OIDC_RESOURCE;
if (!resource) {
  console.error('OIDC_RESOURCE must be the MCP server resource (its public URL of /mcp)');
  process.exit(2);
}

async function signingKeys() {
  const file = process.env.OIDC_KEYS_FILE;
  if (file && existsSync(file)) {
    return JSON.parse(readFileSync(file, 'utf8'));
  }
  const keys = [];
  for (const [alg, kid] of [['ES256', 'e2e-es256'], ['RS256', 'e2e-rs256']]) {
    const { privateKey } = await generateKeyPair(alg, { extractable: true });
    keys.push({ ...(await exportJWK(privateKey)), alg, kid, use: 'sig' });
  }
  if (file) writeFileSync(file, JSON.stringify(keys), { mode: 0o600 });
  return keys;
}

const keys = await signingKeys();
const rsaPublicPem = createPublicKey({ key: keys.find((k) => k.kty === 'RSA'), format: 'jwk' })
  .export({ type: 'spki', format: 'pem' });

const servers = {
  [resource]: { audience: resource, sign: { alg: 'ES256' } },
  'urn:e2e:rs256': { audience: resource, sign: { alg: 'RS256' } },
  'urn:e2e:other-audience': { audience: 'http://127.0.0.1:9/other-server', sign: { alg: 'ES256' } },
  'urn:e2e:short-lived': { audience: resource, sign: { alg: 'ES256' }, ttl: 2 },
  'urn:e2e:not-yet-valid': { audience: resource, sign: { alg: 'ES256' } },
  'urn:e2e:hs256-public-key': {
    audience: resource,
    sign: { alg: 'HS256', key: Buffer.from(rsaPublicPem), kid: 'e2e-rs256' },
  },
};

// The people of the CIBA flow.
const users = new Set(['alice', 'bob']);
// Requests the device has not answered yet, by auth_req_id.
const cibaRequests = new Map();
// Every request a device was sent, counted by login_hint.
const cibaReceived = new Map();
const cibaTtl = Number(process.env.OIDC_CIBA_TTL) || 600;
// Subjects a test asked a token to carry instead of the person's, by grant id.
const subjectOverrides = new Map();
const RAR_TYPE = 'ask_first_approval';

const client = (id) => ({
  client_id: id,
  client_secret: `${id}-secret`,
  grant_types: ['client_credentials'],
  redirect_uris: [],
  response_types: [],
  token_endpoint_auth_method: 'client_secret_post',
});

const cibaClient = {
  client_id: 'mcp-ciba',
  client_secret: 'mcp-ciba-secret',
  grant_types: ['urn:openid:params:grant-type:ciba'],
  redirect_uris: [],
  response_types: [],
  token_endpoint_auth_method: 'client_secret_basic',
  backchannel_token_delivery_mode: 'poll',
  authorization_details_types: ['ask_first_approval'],
};

// The approval page's sign-in client, when the test names its redirect URI.
const loginRedirect = process.env.OIDC_LOGIN_REDIRECT_URI;
const loginClients = loginRedirect
  ? [{
      client_id: 'approval-page',
      client_secret: 'approval-page-secret',
      grant_types: ['authorization_code'],
      response_types: ['code'],
      redirect_uris: [loginRedirect],
      token_endpoint_auth_method: 'client_secret_basic',
    }]
  : [];

const provider = new Provider(issuer, {
  clients: [client('alice'), client('bob'), cibaClient, ...loginClients],
  jwks: { keys },
  findAccount: async (_ctx, id) => (users.has(id) ? { accountId: id, claims: async () => ({ sub: id }) } : undefined),
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    ciba: {
      enabled: true,
      deliveryModes: ['poll'],
      processLoginHint: async (_ctx, loginHint) => (users.has(loginHint) ? loginHint : undefined),
      processLoginHintToken: async () => undefined,
      verifyUserCode: async () => {},
      validateRequestContext: async () => {},
      validateBindingMessage: async (_ctx, message) => {
        if (!/^[A-Za-z0-9]{4,12}$/.test(message ?? '')) {
          throw new errors.InvalidBindingMessage('binding_message must be a short code');
        }
      },
      triggerAuthenticationDevice: async (_ctx, request) => {
        cibaRequests.set(request.jti, request);
        const hint = request.params.login_hint;
        cibaReceived.set(hint, (cibaReceived.get(hint) ?? 0) + 1);
      },
    },
    richAuthorizationRequests: {
      enabled: true,
      types: {
        [RAR_TYPE]: {
          validate: async (_ctx, detail) => {
            for (const key of ['tool', 'operation', 'target', 'question']) {
              if (typeof detail[key] !== 'string' || !detail[key]) {
                throw new errors.InvalidAuthorizationDetails(`${RAR_TYPE} needs ${key}`);
              }
            }
          },
        },
      },
      authorizationDetailsForGrantSource: async (_ctx, source) => source.rar,
      authorizationDetailsForAccessToken: async (_ctx, _token, source) => source?.rar,
      authorizationDetailsForIntrospection: async (_ctx, token) => token.rar,
    },
    resourceIndicators: {
      enabled: true,
      defaultResource: async (_ctx, _client, oneOf) => oneOf,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (_ctx, indicator) => {
        const server = servers[indicator];
        if (!server) throw new errors.InvalidTarget(`unknown resource ${indicator}`);
        return {
          scope: 'mcp',
          audience: server.audience,
          accessTokenTTL: server.ttl ?? 300,
          accessTokenFormat: 'jwt',
          jwt: { sign: server.sign },
        };
      },
    },
  },
  ttl: {
    BackchannelAuthenticationRequest: () => cibaTtl,
  },
  formats: {
    customizers: {
      jwt: async (_ctx, token, jwt) => {
        if (token.resourceServer?.identifier() === 'urn:e2e:not-yet-valid') {
          jwt.payload.nbf = Math.floor(Date.now() / 1000) + 3600;
        }
        const subject = token.grantId && subjectOverrides.get(token.grantId);
        if (subject) jwt.payload.sub = subject;
      },
    },
  },
});
// The person's device, played by the test (loopback only, like the whole server).
async function readJson(ctx) {
  const chunks = [];
  for await (const chunk of ctx.req) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
}

provider.use(async (ctx, next) => {
  if (ctx.path === '/test/ciba/requests' && ctx.method === 'GET') {
    ctx.body = [...cibaRequests.values()].map((request) => ({
      auth_req_id: request.jti,
      login_hint: request.params.login_hint,
      binding_message: request.params.binding_message,
      authorization_details: JSON.parse(request.params.authorization_details ?? 'null'),
    }));
    return;
  }
  if (ctx.path === '/test/ciba/received' && ctx.method === 'GET') {
    ctx.body = Object.fromEntries(cibaReceived);
    return;
  }
  if (ctx.path === '/test/ciba/answer' && ctx.method === 'POST') {
    const body = await readJson(ctx);
    const request = cibaRequests.get(body.auth_req_id);
    if (!request) {
      ctx.status = 404;
      ctx.body = { error: 'no such open request' };
      return;
    }
    cibaRequests.delete(body.auth_req_id);
    if (body.action === 'approve') {
      const grant = new provider.Grant({ accountId: request.accountId, clientId: request.clientId });
      grant.addOIDCScope('openid');
      if (request.resource) grant.addResourceScope(request.resource, 'mcp');
      const grantId = await grant.save();
      if (body.sub) subjectOverrides.set(grantId, body.sub);
      const rar = body.authorization_details ?? JSON.parse(request.params.authorization_details);
      await provider.backchannelResult(request.jti, grantId, { rar });
    } else if (body.action === 'deny') {
      await provider.backchannelResult(request.jti, new errors.AccessDenied('the person declined'));
    } else if (body.action === 'expire') {
      const stored = await provider.BackchannelAuthenticationRequest.adapter.find(request.jti);
      stored.exp = Math.floor(Date.now() / 1000) - 1;
    } else {
      ctx.status = 400;
      ctx.body = { error: 'action must be approve, deny or expire' };
      return;
    }
    ctx.body = { done: body.action };
    return;
  }
  await next();
});

// The sign-in pages of the approval page's client (with devInteractions off, these are the
// provider's interaction pages): a login form, and consent given without asking.
async function readForm(req) {
  let body = '';
  for await (const chunk of req) {
    body += chunk;
    if (body.length > 4096) break;
  }
  return new URLSearchParams(body);
}

provider.use(async (ctx, next) => {
  const match = /^\/interaction\/([A-Za-z0-9_-]+)(\/login)?$/.exec(ctx.path);
  if (!loginRedirect || !match) return next();
  const details = await provider.interactionDetails(ctx.req, ctx.res);
  if (details.prompt.name === 'consent') {
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
    grant.addOIDCScope(String(details.params.scope || 'openid'));
    const grantId = await grant.save();
    return provider.interactionFinished(ctx.req, ctx.res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }
  if (ctx.method === 'GET') {
    ctx.type = 'html';
    ctx.body = `<!doctype html><html><head><title>Sign in</title></head><body><form method="post" action="/interaction/${match[1]}/login"><input id="login" name="login"><input id="password" name="password" type="password"><button id="submit" type="submit">Sign in</button></form></body></html>`;
    return undefined;
  }
  const form = await readForm(ctx.req);
  const login = form.get('login') || '';
  if (!/^[a-z]+$/.test(login) || form.get('password') !== `${login}-password`) {
    ctx.status = 403;
    ctx.type = 'text';
    ctx.body = 'wrong login or password';
    return undefined;
  }
  return provider.interactionFinished(ctx.req, ctx.res, { login: { accountId: login } }, { mergeWithLastSubmission: false });
});

provider.on('server_error', (_ctx, error) => console.error('oidc-provider server_error:', error));

const server = provider.listen(port, '127.0.0.1', () => {
  console.log(`oidc-provider listening on ${issuer}`);
});
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
