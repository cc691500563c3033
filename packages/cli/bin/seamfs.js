#!/usr/bin/env node
// A committed shim, so npm links the command at install time, before the first build.
import '../dist/bin.js'
