// Package app is a fixture of the archmap tests: declarations of each kind
// a row of the map may name.
package app

// App has a method and a field.
type App struct{ cache int }

// Run is a method.
func (a *App) Run() {}

func helper() {}

// Loader has a generic receiver.
type Loader[K comparable, V any] struct{}

// Get is a method on a generic type.
func (l *Loader[K, V]) Get() {}

// Notifier is an interface.
type Notifier interface{ Notify() }

const limit = 1

var operations = map[string]bool{}
