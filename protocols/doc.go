// Package protocols is the contract between the fetch engine and each
// protocol implementation: the Fetcher interface, the Request it is given,
// the streamed Response it returns, listing entries, and the sentinel
// errors every protocol maps its replies to.
//
// It knows no concrete protocol; those live in its sub-packages and are
// wired into a fetch.Client in one visible place.
package protocols
