package doclinks

// Present is named by the package comment.
func Present() {}

// Kind has a method and a field.
type Kind struct{ Field int }

// Method is named by the package comment.
func (Kind) Method() {}
