package testutil

import (
	"slices"
	"testing"
)

func TestDocLinks(t *testing.T) {
	t.Parallel()
	got, err := DocLinks("testdata/doclinks", map[string]string{"testutil": "."})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"[Absent] names nothing",
		"[Kind.Gone] names nothing",
		"[testutil.NoSuchThing] names nothing",
		"[Missing] names nothing",
	}
	if !slices.Equal(got, want) {
		t.Errorf("DocLinks = %q, want %q", got, want)
	}
}
