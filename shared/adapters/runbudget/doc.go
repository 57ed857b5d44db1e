// Package runbudget says whether a warm function has time for another run before its deadline: a Meter
// remembers how long the last run of one kind took in this process, and another run starts only if the
// time left covers that, with headroom. A cold process, with nothing measured, assumes the caller's
// conservative estimate. So a run that takes 25 s at 150,000 pods is not started with 21 s left, as a
// fixed margin sized on a sandbox cluster would. It is pure: the caller passes the clock's reading.
package runbudget
