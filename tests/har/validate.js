// Validates a HAR file against the HAR 1.2 schema; exits 1 with the errors when invalid.
const fs = require("fs");
const validator = require("har-validator");

const file = process.argv[2];
const har = JSON.parse(fs.readFileSync(file, "utf8"));
validator
  .har(har)
  .then(() => {
    console.log(`valid HAR 1.2: ${har.log.entries.length} entries`);
  })
  .catch((err) => {
    console.error(`invalid HAR: ${err.message}`);
    console.error(JSON.stringify(err.errors || [], null, 2));
    process.exit(1);
  });
