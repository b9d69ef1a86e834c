import nock from 'nock';

// Only the suite's own loopback traffic may leave a test; anything else must be mocked with nock.
nock.disableNetConnect();
nock.enableNetConnect(/^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/);
