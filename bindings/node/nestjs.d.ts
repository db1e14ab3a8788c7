// Types for `sluicegate/nestjs`: @nestjs/throttler's module, guard and decorators.
import type { CanActivate, DynamicModule, ExecutionContext, HttpException } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import type { Algorithm, ManualClock, RedisConnection } from './index';

export type Resolvable<T> = T | ((context: ExecutionContext) => T | Promise<T>);

export interface ThrottlerOptions {
  /** Names the limit in the headers and on Redis; default 'default'. */
  name?: string;
  /** Requests per `ttl`. */
  limit: Resolvable<number>;
  /** The window, in ms; windows start at each client's first request. */
  ttl: Resolvable<number>;
  skipIf?: (context: ExecutionContext) => boolean;
  ignoreUserAgents?: RegExp[];
  getTracker?: (req: any, context: ExecutionContext) => string | Promise<string>;
  generateKey?: (context: ExecutionContext, tracker: string, throttlerName: string) => string;
}

/** `{ throttlers, ... }`: @nestjs/throttler's common options, and sluicegate's own. */
export interface ThrottlerModuleOptionsObject {
  throttlers: ThrottlerOptions[];
  skipIf?: (context: ExecutionContext) => boolean;
  ignoreUserAgents?: RegExp[];
  getTracker?: (req: any, context: ExecutionContext) => string | Promise<string>;
  generateKey?: (context: ExecutionContext, tracker: string, throttlerName: string) => string;
  errorMessage?: string | ((context: ExecutionContext, detail: { limits: { name: string; limit: number; ttl: number }[]; keys: unknown[] }) => string | Promise<string>);
  /** false: no rate-limit headers. */
  setHeaders?: boolean;
  /** Networks whose X-Forwarded-For / Forwarded are believed (the default tracker is the library's client address, not `req.ip`). */
  trustedProxies?: string[];
  forwardedHeaders?: 'x-forwarded-for' | 'forwarded' | 'both';
  ipv6Prefix?: number;
  /** A Redis URL (or `{ url, caCert, ... }`): every process shares the limits. */
  redis?: string | RedisConnection;
  redisCluster?: string | RedisConnection;
  onBackendError?: 'allow' | 'deny' | 'local';
  standardHeaders?: boolean | 'draft-6' | 'draft-7' | 'draft-8' | 'draft-10';
  legacyHeaders?: boolean;
  maxKeys?: number;
  /** Default 'fixed-window' (anchored at each client's first request). */
  algorithm?: Algorithm;
  clock?: ManualClock;
  logger?: { warn(...args: unknown[]): void; error(...args: unknown[]): void };
  validate?: boolean | Record<string, boolean>;
}

export type ThrottlerModuleOptions = ThrottlerOptions[] | ThrottlerModuleOptionsObject;

export declare class ThrottlerModule {
  static forRoot(options?: ThrottlerModuleOptions): DynamicModule;
  static forRootAsync(options: { imports?: any[]; inject?: any[]; useFactory: (...args: any[]) => ThrottlerModuleOptions | Promise<ThrottlerModuleOptions> }): DynamicModule;
}

export declare class ThrottlerGuard implements CanActivate {
  constructor(options: ThrottlerModuleOptions, reflector: Reflector);
  canActivate(context: ExecutionContext): Promise<boolean>;
  /** Override to let requests through. */
  protected shouldSkip(context: ExecutionContext): Promise<boolean>;
  /** Override to key requests your way; default the library's client address. */
  protected getTracker(req: Record<string, any>, context?: ExecutionContext): Promise<string>;
  protected getRequestResponse(context: ExecutionContext): { req: Record<string, any>; res: Record<string, any> };
}

export declare class ThrottlerException extends HttpException {
  constructor(message?: string);
}

export interface ThrottleOptions {
  limit?: Resolvable<number>;
  ttl?: Resolvable<number>;
  getTracker?: ThrottlerOptions['getTracker'];
  generateKey?: ThrottlerOptions['generateKey'];
}

export declare function Throttle(options: Record<string, ThrottleOptions>): MethodDecorator & ClassDecorator;
export declare function SkipThrottle(skip?: Record<string, boolean>): MethodDecorator & ClassDecorator;
export declare const throttlerMessage: string;
export declare function getOptionsToken(): string;
