// Package routes holds the tables that say which requests may reach the
// Proxmox VE API, and how a request is matched against them:
//
//   - the allowlist of the transport guard ([Allowlist]): every read, the
//     literal (method, path pattern) pairs each mutation class needs, the
//     ticket login, and the API gateway's routes;
//   - the gateway's deny list ([DeniedBy]), which the library checks before
//     anything is sent and the transport guard checks again on every
//     request that leaves the client;
//   - the gateway's path rules ([ParsePath], [Segments]).
//
// The tables are written out here on purpose, not derived from the
// library's declarations of its operations: the guard is an independent
// layer, so a mistake in an operation (a wrong path, a wrong class) is
// stopped below it rather than repeated in it. The library's own tests
// check that each operation's route is covered by its own class and by no
// other.
//
// The package knows classes by their names ("power", "snapshot", …) and
// imports nothing of this module: the library turns a verdict into its own
// refusal errors.
package routes
