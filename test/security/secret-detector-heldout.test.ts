// Held-out cases for the credential detector, written before the detector was tuned against
// the web-page corpus and never used to tune it. The figure reported from this file is what the
// detector does on cases it was not shaped on. (Same author as the detector: independent in time
// and purpose, not in person.) Values are invented in the providers' published formats.
import { describe, expect, it } from 'vitest';
import { detectCredentials } from '../../src/redact/scrub.js';

const credentials: Array<[string, string]> = [
  ['GitHub classic PAT in a shell export', 'export GH_TOKEN=ghp_R2d2C3po8Luke9Leia0Han1Solo2Chewie3Yoda'],
  ['GitHub fine-grained PAT in JSON', '{"token":"github_pat_11ABCDEFG0aZ9yX8wV7uT6_sR5qP4oN3mL2kJ1iH0gF9eD8cB7aZ6yX5wV4uT3sR2qP1oN0mL9kJ8iH7gF6eD5"}'],
  ['Slack bot token in a curl header', 'curl -H "Authorization: Bearer xoxb-2210987654321-4455667788990-Zq8Wv3Rt6Yp1Lm4Nc7Bx0Kd"'],
  ['Slack app-level token', 'SLACK_APP_TOKEN=xapp-1-A0123BCD456-7890123456789-0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a6978'],
  ['OpenAI project key in a Python line', 'client = OpenAI(api_key="sk-proj-Tq3Lm9Zx2Vb7Nc5Kd8Wr1Yh4Ps6Gf0Ja3Ue9Io7Rt2Qw5Ey8")'],
  ['Anthropic key in a log line', 'using key sk-ant-api03-Xy9Wv8Ut7Sr6Qp5On4Ml3Kj2Ih1Gf0Ed9Cb8Aa7Zz6Yy5Xx4Ww3Vv2-AbCdEfAA for the call'],
  ['Google API key in a URL', 'https://maps.googleapis.com/maps/api/js?key=AIzaSyB1c2D3e4F5g6H7i8J9k0L1m2N3o4P5q6R'],
  ['AWS key id and secret in credentials file', '[default]\naws_access_key_id = AKIAZ7Q3R5T2W9Y4U6P8\naws_secret_access_key = q8Rt5Vw2Xy7Za1Bc4De6Fg9Hi3Jk0Lm2No5Pq8Rs\n'],
  ['JWT in an Authorization header', 'Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI0MjQyIiwibmFtZSI6IkphbmUiLCJpYXQiOjE3MDAwMDAwMDB9.Qm9vJ3pQb2xpY2llc0FyZUhhcmRfX19fX18'],
  ['Discord bot token in a .env line', 'DISCORD_BOT=MTE4NzY1NDMyMTA5ODc2NTQzMg.GhJkLm.a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9'],
  ['PEM private key', 'key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1b2c3d4e5f6\nabcdef0123456789\n-----END RSA PRIVATE KEY-----\nend'],
  ['OpenSSH private key', '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----'],
  ['Stripe live secret key', 'STRIPE=sk_live_51Hq2Rt5Vw8Xy1Za4Bc7De0Fg3Hi6Jk9Lm'],
  ['Hugging Face token', 'hf_Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5Yz'],
];

const lookalikes: Array<[string, string]> = [
  ['UUID v4', 'request 3f2b8c1e-9d4a-4f6b-8e2c-7a1d5b9c0e3f finished'],
  ['git commit id', 'commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nAuthor: someone'],
  ['SHA-256 digest', 'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
  ['npm integrity hash', '"integrity": "sha512-Kq8Rt5Vw2Xy7Za1Bc4De6Fg9Hi3Jk0Lm2No5Pq8Rs1Tu4Vw7Xy0Za3Bc6De9Fg2Hi5Jk8Lm1No4Pq7Rs0Tu3Vw6Xy9Za=="'],
  ['base64 PNG data URI', '<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==">'],
  ['CSS class with sk- prefix', '<div class="sk-circle-bounce sk-folding-cube-animation-delay-container">'],
  ['AWS documentation example key id is still a key shape but the doc secret line alone is not', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY appears alone'],
  ['public key block', '-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----'],
  ['certificate', '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUFakeCertificateBody\n-----END CERTIFICATE-----'],
  ['Discord snowflake ids', 'channel 300000000000000002 message 1187654321098765432'],
  ['a long hyphenated slug', 'https://example.com/blog/how-to-rotate-your-xoxb-tokens-safely-in-2024-and-beyond'],
  ['a JWT-looking word without JSON header', 'eyJustKidding.eyJustKiddingAgain.thisIsNotASignatureAtAll'],
  ['ghp_ in prose', 'Tokens start with ghp_ followed by 36 characters.'],
  ['version strings', 'node-v20.18.0-linux-x64 openssl-3.0.13 libstdc++-13.2.0-23ubuntu4'],
];

describe('credential detector, held-out cases', () => {
  it.each(credentials)('finds: %s', (_what, text) => {
    expect(detectCredentials(text).length).toBeGreaterThan(0);
  });
  it.each(lookalikes)('leaves alone: %s', (_what, text) => {
    expect(detectCredentials(text)).toEqual([]);
  });
});
