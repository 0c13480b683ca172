#!/usr/bin/env node
// Agents' hooks call the native solaria-hook directly (`solaria install` writes its
// path), never through node: this is for running it by hand.
require("./launch.js")("solaria-hook");
