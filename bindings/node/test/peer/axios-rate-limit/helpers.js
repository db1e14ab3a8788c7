// Adapted from axios-rate-limit's __tests__/helpers.js (https://github.com/aishek/axios-rate-limit,
// commit dc01f088384322e0a68455bacfcb4dc546eceda6, MIT License, Copyright (c) 2013 Alexandr
// Borisov): `requireAxios` loads this package's axios (1.x) instead of its axios0 / axios1.
function requireAxios () {
  return require('axios') // eslint-disable-line global-require
}

function delay (milliseconds) {
  return new Promise(function (resolve) {
    return setTimeout(resolve, milliseconds)
  })
}

module.exports = {
  requireAxios: requireAxios,
  delay: delay
}
