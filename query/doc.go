// Package query is Subsecond's query language: the one table of parameters
// (Params) that drives the CLI's flags, the URL parameters of the API and
// the pages, their defaults, validation and error texts (*ParamError); the
// Query and Filter they fill; a Filter compiled against a capture (Match);
// the limits a view's shape must respect; and the one way to write seconds
// and wall-clock times in a parameter.
//
//	q, err := query.Parse(r.URL.Query()) // ?cpu=39&start=56&end=62
//	if err != nil { … }                  // a *ParamError naming the parameter
//	if err := q.Resolve(&capture.Profile); err != nil { … }
//	m, err := q.Filter.Compile(capture)
//
// It imports the root package's nouns and the standard library only.
package query
