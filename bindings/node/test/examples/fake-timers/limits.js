// The README's example of a user's own fake-timer test (jest), run as a user runs it (by
// test/examples_fake_timers.test.js): a limit on a DateClock moves with jest's fake timers.
const express = require('express');
const request = require('supertest');
const { rateLimit, DateClock } = require('../../..'); // a user writes: require('sluicegate')

function makeApp(options) {
  const app = express();
  app.use(rateLimit({ windowMs: 60_000, limit: 2, ...options }));
  app.get('/', (req, res) => res.send('ok'));
  return app;
}

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

test('a client is let in again once its window has passed', async () => {
  const app = makeApp({ clock: new DateClock() }); // the limit reads Date.now(), which jest moves
  await request(app).get('/').expect(200);
  await request(app).get('/').expect(200);
  await request(app).get('/').expect(429);
  jest.advanceTimersByTime(60_000);
  await request(app).get('/').expect(200);
});

test('without the DateClock, the engine reads the machine\'s clock: jest does not move it', async () => {
  const app = makeApp({});
  await request(app).get('/').expect(200);
  await request(app).get('/').expect(200);
  jest.advanceTimersByTime(60_000);
  await request(app).get('/').expect(429);
});
