// Package testenv runs what the tests and the local run need beside the
// code under test, the same way everywhere: child processes that die with
// the process that started them, the stand-ins for the stores (redis-server,
// a Redis Cluster, FerretDB for the MongoDB protocol) on free loopback
// ports, a DNS server that gives several replicas one name, and waits on a
// condition with a deadline instead of sleeps.
//
// It is a module of its own, and requires only golang.org/x/net (the DNS
// message format), which every module using it has already through gRPC,
// so the services' tests can use it without taking on the stand-ins'
// dependencies. FerretDB runs as a separate command (cmd/ferretdb, a
// module outside go.work that only it requires): tests reach it over the
// MongoDB protocol with the real driver, and no other module requires
// FerretDB.
//
// Child processes are started with the platform's process attributes
// (process_linux.go, process_other.go); the rest builds and runs on Linux
// and macOS alike.
package testenv
