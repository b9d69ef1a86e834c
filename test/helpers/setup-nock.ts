import nock from 'nock';

// Only the suite's own loopback traffic may leave a test; anything else must be mocked with nock.
nock.disableNetConnect();
nock.enableNetConnect(/^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/);

// nock patches node's http, shared by the test files one jest worker runs in turn: each file takes
// its patch away, or the next file's interceptors would sit behind this file's
afterAll(() => {
  nock.cleanAll();
  nock.restore();
});
