#!/usr/bin/env node
require("./launch.js")("solaria");
