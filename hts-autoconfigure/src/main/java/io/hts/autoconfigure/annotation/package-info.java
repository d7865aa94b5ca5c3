/**
 * The annotation model: {@link io.hts.autoconfigure.annotation.HtsTask} on bean methods, assembled
 * into named {@code TaskGraph} beans.
 */
@NullMarked
package io.hts.autoconfigure.annotation;

import org.jspecify.annotations.NullMarked;
