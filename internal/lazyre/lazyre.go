// Package lazyre holds regular expressions that are compiled on first use
// instead of at program start.
//
// A package-level regexp.MustCompile runs during package initialization of
// every binary that links the package, whether or not the expression is
// ever used; this module's packages had dozens, a measurable part of the
// server's start. A [Regexp] costs one small allocation at
// start and compiles its pattern the first time it is used. Patterns are
// constants checked by [CompileAll] in the tests, so a bad one still fails
// before release rather than at a user's first call.
package lazyre

import (
	"regexp"
	"sync"
	"sync/atomic"
)

// Regexp is a regular expression compiled on first use. Its methods are
// those of *regexp.Regexp; it is safe for concurrent use.
type Regexp struct {
	pattern  string
	once     sync.Once
	re       *regexp.Regexp // set by once
	compiled atomic.Bool
}

var all struct {
	mu   sync.Mutex
	list []*Regexp
}

// New returns a Regexp for pattern, which is compiled (with
// regexp.MustCompile: a bad pattern panics) the first time it is used.
func New(pattern string) *Regexp {
	r := &Regexp{pattern: pattern} // the one allocation: no closures until first use
	all.mu.Lock()
	all.list = append(all.list, r)
	all.mu.Unlock()
	return r
}

// CompileAll compiles every Regexp made so far, and returns the pattern
// of the first one that does not compile with its error. Tests call it so
// that a bad pattern fails there, as regexp.MustCompile at package
// initialization would have.
func CompileAll() error {
	all.mu.Lock()
	list := append([]*Regexp(nil), all.list...)
	all.mu.Unlock()
	for _, r := range list {
		if _, err := regexp.Compile(r.pattern); err != nil {
			return err
		}
	}
	return nil
}

// Compiled returns the patterns of the Regexps that have been compiled in
// this process so far, so that a test can check that a path (a server's
// start) compiles none.
func Compiled() []string {
	all.mu.Lock()
	defer all.mu.Unlock()
	var out []string
	for _, r := range all.list {
		if r.compiled.Load() {
			out = append(out, r.pattern)
		}
	}
	return out
}

// get returns the compiled expression, compiling it on first use.
func (r *Regexp) get() *regexp.Regexp {
	r.once.Do(r.compile)
	if r.re == nil { // the first use panicked (a bad pattern): so does every later one
		panic("lazyre: pattern did not compile: " + r.pattern)
	}
	return r.re
}

func (r *Regexp) compile() {
	r.compiled.Store(true)
	r.re = regexp.MustCompile(r.pattern)
}

// Regexp returns the compiled expression.
func (r *Regexp) Regexp() *regexp.Regexp { return r.get() }

// String returns the pattern.
func (r *Regexp) String() string { return r.pattern }

// MatchString is regexp.Regexp.MatchString.
func (r *Regexp) MatchString(s string) bool { return r.get().MatchString(s) }

// FindStringSubmatch is regexp.Regexp.FindStringSubmatch.
func (r *Regexp) FindStringSubmatch(s string) []string { return r.get().FindStringSubmatch(s) }

// FindAllString is regexp.Regexp.FindAllString.
func (r *Regexp) FindAllString(s string, n int) []string { return r.get().FindAllString(s, n) }

// ReplaceAllString is regexp.Regexp.ReplaceAllString.
func (r *Regexp) ReplaceAllString(src, repl string) string {
	return r.get().ReplaceAllString(src, repl)
}

// ReplaceAllStringFunc is regexp.Regexp.ReplaceAllStringFunc.
func (r *Regexp) ReplaceAllStringFunc(src string, repl func(string) string) string {
	return r.get().ReplaceAllStringFunc(src, repl)
}

// ReplaceAll is regexp.Regexp.ReplaceAll.
func (r *Regexp) ReplaceAll(src, repl []byte) []byte { return r.get().ReplaceAll(src, repl) }
