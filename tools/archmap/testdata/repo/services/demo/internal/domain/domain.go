// Package domain is a fixture of the archmap tests: a second package.
package domain

// Lookup is a function.
func Lookup() {}
