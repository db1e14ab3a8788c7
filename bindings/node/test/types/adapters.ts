// The framework adapters' documented forms, type-checked under `tsc --strict` against the
// frameworks' own types (fastify ships its own; koa's and hono's contexts are left untyped). Never run.
import Fastify from 'fastify';
import sluicegateFastify from 'sluicegate/fastify';
import ratelimit from 'sluicegate/koa';
import { rateLimiter } from 'sluicegate/hono';
import { requestDecider, type RequestVerdict } from 'sluicegate';

async function fastifyApp() {
  const app = Fastify();
  await app.register(sluicegateFastify, {
    max: (request, key) => (request.headers['x-plan'] === 'pro' ? 100 : 10) + key.length * 0,
    timeWindow: '1 minute',
    keyGenerator: (request) => request.headers['x-api-key'] as string,
    allowList: ['127.0.0.1'],
    errorResponseBuilder: (_request, context) => ({ statusCode: context.statusCode, message: `retry in ${context.after}` }),
    trustedProxies: ['10.0.0.0/8'],
    redis: 'redis://127.0.0.1:6379/',
  });
  app.get('/tight', { config: { rateLimit: { max: 3, timeWindow: 1000 } } }, async () => 'ok');
  app.get('/own', { onRequest: app.rateLimit({ max: 1 }) }, async () => 'ok');
}

const koaMiddleware = ratelimit({ duration: 60_000, max: 100, id: (ctx) => ctx.ip, headers: { remaining: 'Rate-Limit-Remaining' }, throw: true });
const reset: Promise<boolean> = koaMiddleware.resetKey('127.0.0.1');

// As `app.use(...)` takes it (hono's own types need TypeScript 5.7).
const honoMiddleware: (c: any, next: () => Promise<void>) => Promise<Response | void> = rateLimiter({ windowMs: 60_000, limit: 100, keyGenerator: (c) => c.req.header('x-api-key') ?? '', standardHeaders: 'draft-7' });

async function anyFramework(): Promise<number> {
  const decide = requestDecider({ quota: '10/second', trustedProxies: ['10.0.0.0/8'] });
  const verdict: RequestVerdict = await decide({ method: 'GET', url: '/', headers: { 'x-forwarded-for': '1.2.3.4' }, remoteAddress: '10.0.0.1' });
  for (const [name, value] of verdict.headers) void [name.toUpperCase(), value];
  return verdict.status;
}

void [fastifyApp, reset, honoMiddleware, anyFramework];

// NestJS, as @nestjs/throttler's users write it.
import { Injectable } from '@nestjs/common';
import { ThrottlerModule, ThrottlerGuard, Throttle, SkipThrottle } from 'sluicegate/nestjs';

const throttlerModule = ThrottlerModule.forRoot({ throttlers: [{ name: 'short', ttl: 1000, limit: 3 }, { ttl: 60_000, limit: 100 }], trustedProxies: ['10.0.0.0/8'] });

@Injectable()
class UserGuard extends ThrottlerGuard {
  protected async getTracker(req: Record<string, any>): Promise<string> {
    return String(req.user?.id ?? 'anonymous');
  }
}

class CatsController {
  @Throttle({ default: { limit: 3, ttl: 60_000 } })
  list(): string {
    return 'cats';
  }

  @SkipThrottle()
  health(): string {
    return 'ok';
  }
}

void [throttlerModule, UserGuard, CatsController];
