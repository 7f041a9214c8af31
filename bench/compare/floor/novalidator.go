//go:build floornovalidator

package main

// noValidator checks nothing: the floor without validator/v10 linked.
type noValidator struct{}

func (noValidator) Struct(any) error { return nil }

func newValidator() noValidator { return noValidator{} }
