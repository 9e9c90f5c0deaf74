import {
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Metrics } from './metrics.js';
import { tracer, tracingEnabled } from './tracing.js';

/** The route label of a request: its route template, `unmatched` for no route (never the raw URL). */
export function routeOf(request: FastifyRequest): string {
  return request.is404 ? 'unmatched' : (request.routeOptions.url ?? 'unmatched');
}

/**
 * Observes every request of `app`: request count and duration by route template and status,
 * and (tracing on) a SERVER span that continues the caller's W3C trace context (`traceparent`,
 * `tracestate`) and is active for the request's hooks and handler, so that authentication,
 * statements and events written become its children. Register before any route.
 */
export function observeHttp(app: FastifyInstance, metrics: Metrics): void {
  const traced = new WeakMap<FastifyRequest, { span: Span; context: Context }>();

  // Tracing's hooks only when tracing is on (it starts before the app is built): without them a
  // request passes two hooks fewer.
  if (tracingEnabled()) {
    app.addHook('onRequest', (request, _reply, done) => {
      const parent = propagation.extract(ROOT_CONTEXT, request.headers);
      const span = tracer.startSpan(
        request.method,
        {
          kind: SpanKind.SERVER,
          attributes: { 'http.request.method': request.method, 'url.path': (request.url ?? '').split('?')[0] ?? '' },
        },
        parent,
      );
      const active = trace.setSpan(parent, span);
      traced.set(request, { span, context: active });
      context.with(active, done);
    });
    // The body is read in the socket's own async context: re-enter the request's before the
    // handlers (and the merchant API's authentication) run.
    app.addHook('preHandler', (request, _reply, done) => {
      const entry = traced.get(request);
      if (!entry) return done();
      context.with(entry.context, done);
    });
  }
  app.addHook('onResponse', (request, reply, done) => {
    const route = routeOf(request);
    metrics.httpRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    const entry = traced.get(request);
    if (entry) {
      entry.span.updateName(`${request.method} ${route}`);
      entry.span.setAttributes({ 'http.route': route, 'http.response.status_code': reply.statusCode });
      if (reply.statusCode >= 500) entry.span.setStatus({ code: SpanStatusCode.ERROR });
      entry.span.end();
      traced.delete(request);
    }
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    const entry = traced.get(request);
    if (entry) {
      entry.span.setAttributes({ 'http.route': routeOf(request), 'error.type': 'aborted' });
      entry.span.setStatus({ code: SpanStatusCode.ERROR });
      entry.span.end();
      traced.delete(request);
    }
    done();
  });
}
