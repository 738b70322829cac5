// Package moneysim holds the money simulation (its tests only): a model-based test that
// drives the real order book and credit ledger through random seeded sequences of payments,
// webhooks, runs, operator actions, provider outages, lost job rows and clock jumps, and
// after every step checks that no money is made, lost or given back twice.
package moneysim
