// Package doclinks is a fixture for DocLinks: [Present], [Kind.Method],
// [Kind.Field] and [testutil.Dialer] name something; [Absent],
// [Kind.Gone] and [testutil.NoSuchThing] do not; [errors.Is] is another
// module's and not checked; [testutil] names a package.
//
//   - a list item naming [Missing]
package doclinks
