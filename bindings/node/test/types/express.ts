// express-rate-limit's documented forms, type-checked under `tsc --strict` against express's
// own types (@types/express): the default import, and `req.rateLimit` on express's Request
// (index.d.ts augments `Express.Request`, as express-rate-limit's users expect). Never run.
import express, { type Request, type Response } from 'express';
import rateLimit, { DateClock, type BackendErrorEvent, type RateLimitInfo } from 'sluicegate';

const app = express();
app.use(rateLimit({ windowMs: 15 * 60 * 1000, limit: 100, trustedProxies: ['unix'], onBackendError: 'local' }));

const signIn = rateLimit({ windowMs: 15 * 60 * 1000, limit: 5, skipSuccessfulRequests: true });
app.post('/login', signIn, async (req: Request, res: Response) => {
  const info: RateLimitInfo = req.rateLimit;
  await signIn.resetKey(req.rateLimit.key); // the README's sign-in recipe
  res.send(`welcome; ${info.remaining} left until ${req.rateLimit.resetTime.toISOString()}`);
});

const shared = rateLimit({ quota: '100/minute', redis: 'redis://127.0.0.1:6379/', logger: console })
  .on('backendError', (event: BackendErrorEvent) => console.error(event.failed, event.onBackendError))
  .on('backendRecovered', (event) => console.info(event.limits));
const errors: number = shared.backendErrors;
const testLimit = rateLimit({ windowMs: 60_000, limit: 1, clock: new DateClock(), validate: { trustProxy: false } });
void [errors, testLimit];
